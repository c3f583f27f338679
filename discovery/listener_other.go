//go:build !linux && !darwin

package discovery

import "net"

// verifyPeerOwner makes no owner check on unsupported platforms.
func verifyPeerOwner(net.Conn) error { return nil }
