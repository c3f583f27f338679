package discovery

import (
	"context"
	"net"
	"testing"
	"time"
)

// Our own listener verifies, on IPv4 and IPv6 loopback (on Linux through both lookups:
// TestOwnerLookupsFindOurConnection).
func TestVerifiedDialerAcceptsOwnListener(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		ln := listenLoopback(t, network)
		if ln == nil {
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
		c.Close()
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	}
}

// loopbackAddr is network's loopback address with any port, for network tcp4 or tcp6.
var loopbackAddr = map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}

// listenLoopback listens on network's loopback, or logs why it cannot (a machine without
// ::1) and returns nil.
func listenLoopback(t *testing.T, network string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, loopbackAddr[network])
	if err != nil {
		t.Logf("%s: %v", network, err)
		return nil
	}
	return ln
}
