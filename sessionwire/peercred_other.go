//go:build !linux && !darwin

package sessionwire

import (
	"errors"
	"net"
)

// PeerCred is not implemented here, so the daemon refuses every connection rather than
// trusting it (and clients refuse every daemon: trust_other.go).
func PeerCred(*net.UnixConn) (uid, pid int, err error) {
	return -1, 0, errors.New("peer credentials are not supported on this platform")
}
