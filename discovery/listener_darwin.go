package discovery

import "net"

// verifyPeerOwner makes no owner check on macOS: the kernel's socket tables that carry an
// owner (the net.inet.tcp.pcblist sysctls) are not read by this code, so the guarantee here
// is only the backend's own token check and the identity check. The README says so.
func verifyPeerOwner(net.Conn) error { return nil }
