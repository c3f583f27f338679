//go:build !linux && !darwin

package paths

// No logind runtime directory off the supported platforms.
func loginRuntimeDir() string { return "" }

var isLoginRuntimeDir = func(string) bool { return false }
