package daemon

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the connecting process's uid (LOCAL_PEERCRED, what getpeereid(3) uses) and
// pid (LOCAL_PEERPID), both recorded by the kernel at connect time.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	var xu *unix.Xucred
	var p int
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		xu, gerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if gerr == nil {
			p, _ = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		}
	}); err != nil {
		return -1, 0, err
	}
	if gerr != nil {
		return -1, 0, gerr
	}
	return int(xu.Uid), p, nil
}
