package endpoint

import (
	"net"
	"syscall"
)

// peerUID is the uid of the process that listens on the socket we connected to, as the
// kernel recorded it (SO_PEERCRED: for a client, the server's credentials at listen time).
func peerUID(c *net.UnixConn) (int, error) {
	return peerUIDFrom(c, func(fd int) (int, error) {
		cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		if err != nil {
			return -1, err
		}
		return int(cred.Uid), nil
	})
}
