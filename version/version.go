// Package version holds this build's version: one variable, set at link time with
// -ldflags "-X github.com/resmongw/resmongw/version.Version=1.2.3".
package version

// Version is this build's version. Daemon, shim, status and doctor all read it: a session's
// preamble carries it, so a daemon can tell that a newer binary now sits at its path.
var Version = "dev"
