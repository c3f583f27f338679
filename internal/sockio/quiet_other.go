//go:build !linux

package sockio

import (
	"net"
	"time"
)

// Quiet is Linux's (see quiet_linux.go); elsewhere NewQuiet declines.
type Quiet struct{}

// NewQuiet returns nil here: callers keep c.
func NewQuiet(net.Conn) *Quiet { return nil }

func (*Quiet) Read([]byte) (int, error)        { return 0, net.ErrClosed }
func (*Quiet) Write([]byte) (int, error)       { return 0, net.ErrClosed }
func (*Quiet) SetReadDeadline(time.Time) error { return net.ErrClosed }
func (*Quiet) CloseWrite() error               { return net.ErrClosed }
func (*Quiet) Close() error                    { return nil }
