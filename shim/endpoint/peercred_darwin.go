package endpoint

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process that listens on the socket we connected to
// (LOCAL_PEERCRED, what getpeereid(3) reads; the stdlib has no wrapper for it on macOS).
func peerUID(c *net.UnixConn) (int, error) {
	return peerUIDFrom(c, func(fd int) (int, error) {
		xu, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return -1, err
		}
		return int(xu.Uid), nil
	})
}
