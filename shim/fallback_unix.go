//go:build linux || darwin

package shim

import (
	"net"
	"os"
	"syscall"
)

// socketPair is two connected Unix sockets: the relay's end and the in-process session's.
func socketPair() (ours, theirs *net.UnixConn, err error) {
	// Under ForkLock with close-on-exec set before it is released, as os/exec expects, so a
	// daemon this process starts meanwhile never inherits either end (macOS has no
	// SOCK_CLOEXEC).
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if ours, err = unixConn(fds[0]); err == nil {
		if theirs, err = unixConn(fds[1]); err != nil {
			ours.Close()
		}
	} else {
		syscall.Close(fds[1])
	}
	return ours, theirs, err
}

// unixConn makes fd a *net.UnixConn (on the runtime's poller); fd itself is closed.
func unixConn(fd int) (*net.UnixConn, error) {
	f := os.NewFile(uintptr(fd), "resmongw-session")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}
