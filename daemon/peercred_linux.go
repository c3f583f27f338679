package daemon

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the connecting process's uid and pid, as the kernel recorded them at
// connect time (SO_PEERCRED), so a later pid reuse cannot fool us.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	var cred *unix.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cred, gerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return -1, 0, err
	}
	if gerr != nil {
		return -1, 0, gerr
	}
	return int(cred.Uid), int(cred.Pid), nil
}
