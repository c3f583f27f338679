//go:build !darwin

package discovery

// defaultStateDir is resmon's state directory on Linux and other POSIX systems.
func defaultStateDir(t Target) string { return xdgStateDir(t) }
