package discovery

import (
	"context"
	"fmt"
	"net"
	"os"
)

// VerifiedDialer dials a loopback backend and, before the connection is handed to anyone
// (so before a token is written to it), checks that the socket answering it belongs to
// this process's user. After resmon crashes its port file and token stay behind, and any
// local user may bind the freed port; without this check the next request would carry the
// token to them.
//
// On Linux the check is made on the exact connection just opened: the kernel's record of
// its server side (found with NETLINK_SOCK_DIAG, else /proc/net/tcp{,6}) carries the uid of
// the listener that accepted it, so there is no window between checking and sending. On
// macOS no owner check is made (this code does not read the kernel's socket tables there);
// the README says so.
type VerifiedDialer struct {
	net.Dialer
}

// DialContext has the signature of net.Dialer.DialContext, for http.Transport. A listener
// owned by someone else is a *net.OpError with Op "dial" (so callers classify it as "not
// sent") wrapping an *UntrustedListenerError.
func (d *VerifiedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := verifyPeerOwner(c); err != nil {
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Addr: c.RemoteAddr(), Err: err}
	}
	return c, nil
}

// DialVerified dials with the zero VerifiedDialer.
func DialVerified(ctx context.Context, network, addr string) (net.Conn, error) {
	var d VerifiedDialer
	return d.DialContext(ctx, network, addr)
}

// UntrustedListenerError says the port is served by a socket of another user (or one whose
// owner could not be established, which is treated the same: fail closed).
type UntrustedListenerError struct {
	Addr string
	UID  int // -1 when the owner could not be found
	Why  string
}

func (e *UntrustedListenerError) Error() string {
	if e.UID < 0 {
		return fmt.Sprintf("the owner of the socket serving %s could not be verified (%s)", e.Addr, e.Why)
	}
	return fmt.Sprintf("the socket serving %s belongs to uid %d, not to you (uid %d)", e.Addr, e.UID, os.Geteuid())
}

// checkOwner compares an owner found for the server side of c with our effective uid.
func checkOwner(c net.Conn, uid int, found bool, why string) error {
	if found && uid == os.Geteuid() {
		return nil
	}
	if !found {
		uid = -1
	}
	return &UntrustedListenerError{Addr: c.RemoteAddr().String(), UID: uid, Why: why}
}
