package sessionwire

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerCred is the uid (LOCAL_PEERCRED, what getpeereid(3) reads; the stdlib has no wrapper
// for it on macOS) and pid (LOCAL_PEERPID) of the process at the other end of c, both
// recorded by the kernel when the connection was made.
func PeerCred(c *net.UnixConn) (uid, pid int, err error) {
	return peerCredFrom(c, func(fd int) (int, int, error) {
		xu, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return -1, 0, err
		}
		p, _ := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		return int(xu.Uid), p, nil
	})
}
