package shim

// parentArgv0 is unknown off Linux: the stdlib has no portable process table, and the shim
// stays stdlib only. The daemon still records the peer pid from the socket credentials.
func parentArgv0(int) string { return "" }
