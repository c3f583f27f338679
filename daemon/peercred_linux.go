package daemon

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the connecting process's uid and pid, as the kernel recorded them at
// connect time (SO_PEERCRED), so a later pid reuse cannot fool us.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	return peerCredFrom(c, func(fd int) (int, int, error) {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return -1, 0, err
		}
		return int(cred.Uid), int(cred.Pid), nil
	})
}
