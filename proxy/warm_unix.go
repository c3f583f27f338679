//go:build linux || darwin

package proxy

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// connOpen reports whether the peer has not closed c and sent nothing on it: a non-blocking
// peek finds no byte to read and no end of stream. A connection that has never carried a
// request has nothing to read, so anything else means it is of no use.
func connOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		open = err == unix.EAGAIN // EWOULDBLOCK is the same number on both platforms
		return true               // never wait: this is a check, not a read
	})
	return err == nil && open
}
