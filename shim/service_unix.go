//go:build linux || darwin

package shim

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// serviceWait bounds the service manager's start command: with the dial wait after it and
// a possible direct spawn, the whole autostart stays inside a harness's 10 s initialize limit.
const serviceWait = 2 * time.Second

// runBounded runs a service-manager command with stdio on /dev/null (our stdout carries the
// protocol) and reports whether it exited 0 within serviceWait.
func runBounded(name string, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), serviceWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 100 * time.Millisecond // a child that keeps the command's stdio must not hold us
	return cmd.Run() == nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
