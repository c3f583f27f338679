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
		c.Close()
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	}
}
