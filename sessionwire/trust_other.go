//go:build !linux && !darwin

package sessionwire

import (
	"net"
)

// errNoPeerCheck: without a way to read the peer's credentials a client cannot tell our
// daemon from another user's, so it refuses rather than trusts.
var errNoPeerCheck = refusef("checking the daemon's owner is not supported on this platform; nothing was sent")

func checkSocketDir(string) error           { return errNoPeerCheck }
func checkPeer(*net.UnixConn, string) error { return errNoPeerCheck }
