//go:build linux || darwin

package paths

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
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

// ownPrivateDir reports whether dir looks like the runtime directory logind made for us: a
// real directory (not a symlink), owned by us, mode 0700. Anything else (absent, another
// user's, loose permissions) is not trusted with our socket.
func ownPrivateDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
