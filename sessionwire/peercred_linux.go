package sessionwire

import (
	"net"
	"syscall"
)

// PeerCred is the uid and pid of the process at the other end of c, as the kernel recorded
// them (SO_PEERCRED): for a client, the server's credentials at listen time; for the daemon,
// the client's at connect time, so a later pid reuse cannot fool either side.
func PeerCred(c *net.UnixConn) (uid, pid int, err error) {
	return peerCredFrom(c, func(fd int) (int, int, error) {
		cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		if err != nil {
			return -1, 0, err
		}
		return int(cred.Uid), int(cred.Pid), nil
	})
}
