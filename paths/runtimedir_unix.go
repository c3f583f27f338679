//go:build linux || darwin

package paths

import (
	"os"
	"runtime"
	"strconv"

	"github.com/resmongw/resmongw/ours"
)

// loginRuntimeDir is where logind makes the user's runtime directory; macOS has none.
func loginRuntimeDir() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	return "/run/user/" + strconv.Itoa(os.Getuid())
}

// isLoginRuntimeDir decides whether loginRuntimeDir is usable; a variable so tests can decide.
var isLoginRuntimeDir = ownPrivateDir

// ownPrivateDir reports whether dir is the runtime directory logind made for us: a real
// directory (not a symlink) that passes the one rule of package ours (ours, writable by
// nobody else), with the mode logind gives it, 0700. Anything else (absent, another user's,
// loose permissions) is not trusted with our socket.
func ownPrivateDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && ours.File(fi, false) == ours.Trusted && fi.Mode().Perm() == 0o700
}
