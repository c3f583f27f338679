//go:build !linux && !darwin

package shim

// startService: there is no per-user service off Linux and macOS; the shim spawns the daemon.
func startService(func(string) string) bool { return false }
