package discovery

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostileListener is a loopback listener whose socket belongs to uid 65534 (nobody): the
// socket is created on a thread whose fsuid is 65534, which is where Linux takes a socket's
// owner from, so the kernel reports exactly what it would for nobody's own listener. (e2e
// binds one from a real process run as nobody; this keeps the unit test in-process.)
func hostileListener(t *testing.T) net.Listener {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a socket owned by uid 65534")
	}
	runtime.LockOSThread()
	_, _ = unix.SetfsuidRetUid(65534)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	_, _ = unix.SetfsuidRetUid(os.Getuid())
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "hostile")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Issue 10.3: someone else's listener on the port gets no connection handed over, so no
// token: the dial fails with an UntrustedListenerError naming the uid.
func TestVerifiedDialerRefusesAnotherUsersListener(t *testing.T) {
	ln := hostileListener(t)
	// Nothing accepts: a connection waiting in the backlog carries the listener's owner,
	// while accept(2) on one of our own threads would stamp it with ours.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := DialVerified(ctx, "tcp", ln.Addr().String())
	var ule *UntrustedListenerError
	if !errors.As(err, &ule) || ule.UID != 65534 {
		if c != nil {
			c.Close()
		}
		t.Fatalf("got %v, want a refusal naming uid 65534", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("%v is not a dial error, so it would not be classified as not sent", err)
	}
}

// Discovery against a port file naming another user's listener: untrusted_listener, and
// the token is never written (the connection is closed before the request is).
func TestDiscoverRefusesAnotherUsersListener(t *testing.T) {
	ln := hostileListener(t)
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	tok := "a" + strings.Repeat("B", 50)
	writeAtomic(t, TokenFile(dir, port), tok)
	writeAtomic(t, filepath.Join(dir, PortFileName), strconv.Itoa(port))
	b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
	if b != nil || u == nil || u.Reason != ReasonUntrustedListener || !strings.Contains(u.Message, "uid 65534") {
		t.Fatalf("got %+v %+v, want untrusted_listener naming uid 65534", b, u)
	}
	assertNoSecret(t, tok, u)
}

// Both owner lookups, netlink's and the /proc fallback, find a connection to our own listener
// on IPv4 and IPv6 loopback; a pair that is neither a connection nor a listener is not found,
// so verification fails closed.
func TestOwnerLookupsFindOurConnection(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		ln := listenLoopback(t, network)
		if ln == nil {
			continue
		}
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		local, remote := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
		if _, err := sockDiagUID(remote, local); err != nil {
			t.Errorf("%s: sock_diag: %v", network, err)
		}
		if _, err := procNetUID(remote, local); err != nil {
			t.Errorf("%s: /proc/net: %v", network, err)
		}
		dead := &net.TCPAddr{IP: remote.IP, Port: deadPortOn(t, network)}
		if _, err := sockDiagUID(dead, &net.TCPAddr{IP: local.IP, Port: 1}); !errors.Is(err, errNoSocket) {
			t.Errorf("%s: a connection that does not exist: %v", network, err)
		}
		c.Close()
		ln.Close()
	}
}

func deadPortOn(t *testing.T, network string) int {
	t.Helper()
	ln, err := net.Listen(network, loopbackAddr[network])
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}
