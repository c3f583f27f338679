package daemon

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the connecting process's uid (LOCAL_PEERCRED, what getpeereid(3) uses) and
// pid (LOCAL_PEERPID), both recorded by the kernel at connect time.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	return peerCredFrom(c, func(fd int) (int, int, error) {
		xu, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return -1, 0, err
		}
		p, _ := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		return int(xu.Uid), p, nil
	})
}
