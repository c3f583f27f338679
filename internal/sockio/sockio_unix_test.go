//go:build linux || darwin

package sockio

import "syscall"

func errReset() error { return syscall.ECONNRESET }
