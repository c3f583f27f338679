//go:build linux || darwin

package sockio

import "syscall"

func errReset() error { return syscall.ECONNRESET }

func errPipe() error { return syscall.EPIPE }
