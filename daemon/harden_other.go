//go:build !linux && !darwin

package daemon

// harden does nothing on unsupported platforms.
func harden() {}
