//go:build tools

// Package tools pins dependencies until the code that uses them lands.
package tools

import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/kardianos/service"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/tailscale/hujson"
	_ "go.uber.org/goleak"
	_ "go.uber.org/zap"
	_ "golang.org/x/sys/unix"
	_ "gopkg.in/natefinch/lumberjack.v2"
)
