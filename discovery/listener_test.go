package discovery

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
)

// Our own listener verifies, on IPv4 and IPv6 loopback, through both the netlink lookup and
// the /proc fallback; a connection whose server side cannot be found fails closed.
func TestVerifiedDialerAcceptsOwnListener(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network]
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", network, err) // no ::1 on this machine
			continue
		}
		accepted := make(chan net.Conn, 4)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					close(accepted)
					return
				}
				accepted <- c
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := DialVerified(ctx, network, ln.Addr().String())
		cancel()
		if err != nil {
			t.Fatalf("%s: our own listener refused: %v", network, err)
		}
		if runtime.GOOS == "linux" {
			local, remote := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
			if _, err := sockDiagUID(remote, local); err != nil {
				t.Errorf("%s: sock_diag: %v", network, err)
			}
			if _, err := procNetUID(remote, local); err != nil {
				t.Errorf("%s: /proc/net: %v", network, err)
			}
			// A pair that is neither a connection nor a listener is not found.
			dead := &net.TCPAddr{IP: remote.IP, Port: deadPortOn(t, network)}
			if _, err := sockDiagUID(dead, &net.TCPAddr{IP: local.IP, Port: 1}); !errors.Is(err, errNoSocket) {
				t.Errorf("%s: a connection that does not exist: %v", network, err)
			}
		}
		c.Close()
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	}
}

func deadPortOn(t *testing.T, network string) int {
	t.Helper()
	ln, err := net.Listen(network, map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network])
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}
