//go:build !linux

package paths

// Only Linux has logind's /run/user/<uid>; macOS's default does not look for it.
func loginRuntimeDir() string { return "" }

var isLoginRuntimeDir = func(string) bool { return false }
