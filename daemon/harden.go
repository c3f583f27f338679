package daemon

// Harden gives a process that hosts a daemon in-process (`resmongw demo`) the hardening
// `resmongw serve` has (see harden): call it before any token is read.
func Harden() { harden() }
