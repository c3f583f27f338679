// Package paths owns every per-user location of resmongw (home, state directory, the daemon's
// socket, lock and log, the installed service file), so daemon, shim, status and installer
// always agree; it is stdlib only, because the shim imports it.
package paths

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/launchd"
	"github.com/resmongw/resmongw/systemd"
)

// SocketEnv overrides the socket path for the daemon, the shim and status.
const SocketEnv = "RESMONGW_SOCKET"

// maxSunPath is sun_path's size less the terminating NUL: 108 bytes on Linux, 104 on the BSDs.
func maxSunPath() int {
	if runtime.GOOS == "linux" {
		return 107
	}
	return 103
}

// ErrPathTooLong is returned for a socket path the kernel cannot bind.
var ErrPathTooLong = errors.New("socket path too long")

// Socket resolves the daemon's socket: flag, then $RESMONGW_SOCKET, then the per-user default.
// Daemon, shim, status and the control commands call this same function, so they always agree.
//
// The default depends on the uid alone, never on HOME or XDG_* variables: harnesses filter the
// environment of the servers they start (Codex drops XDG_RUNTIME_DIR, some set their own HOME),
// and a socket path that followed those variables gave one user two daemons.
//   - Linux: /run/user/<uid>/resmongw/mcp.sock when logind made that directory (ours, 0700):
//     the directory the systemd user service gets as XDG_RUNTIME_DIR. Otherwise (containers,
//     no logind) <home>/.local/state/resmongw/run/mcp.sock, with <home> from the user
//     database. We prefer a home path to os.TempDir(): /tmp is shared, so another user could
//     pre-create our directory and lock us out, and tmp cleaners may delete a long-lived socket.
//   - macOS: <home>/Library/Application Support/resmongw/mcp.sock.
func Socket(flag string, getenv func(string) string) (string, error) {
	p := flag
	if p == "" {
		p = getenv(SocketEnv)
	}
	if p == "" {
		var err error
		if p, err = DefaultSocket(); err != nil {
			return "", err
		}
	}
	if !filepath.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		p = abs
	}
	if len(p) > maxSunPath() {
		return "", fmt.Errorf("%w: %s is %d bytes, the limit is %d; set %s or --socket to a shorter path",
			ErrPathTooLong, p, len(p), maxSunPath(), SocketEnv)
	}
	return p, nil
}

// DefaultSocket is the per-user socket Socket falls back to (see there). It reads no
// environment variable: tests that need it give their processes a private /run/user
// (internal/testkit.RunUser).
func DefaultSocket() (string, error) {
	if runtime.GOOS == "darwin" {
		home, err := UserHome()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "resmongw", "mcp.sock"), nil
	}
	if rt := loginRuntimeDir(); rt != "" && isLoginRuntimeDir(rt) {
		return filepath.Join(rt, "resmongw", "mcp.sock"), nil
	}
	home, err := UserHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "resmongw", "run", "mcp.sock"), nil
}

// UserHome is the home directory the user database gives our uid: unlike $HOME, the same for
// every process of this user whatever environment its parent passed. Without a user database
// entry (a container running an unlisted uid) it falls back to $HOME, the only answer left.
func UserHome() (string, error) {
	if u, err := lookupUID(strconv.Itoa(os.Getuid())); err == nil && u.HomeDir != "" && filepath.IsAbs(u.HomeDir) {
		return u.HomeDir, nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("cannot find the home directory: no user database entry for this uid and HOME is unset")
	}
	return h, nil
}

// lookupUID is user.LookupId; a variable so tests can stand in for the user database.
var lookupUID = user.LookupId

// LockFile is the daemon's single-instance lock: the socket's path plus ".lock". It belongs
// to the socket, not to its directory, so two sockets in one directory have a daemon each.
func LockFile(socket string) string { return socket + ".lock" }

// LegacyLockFile is the lock of daemons from before LockFile: one per directory, which such a
// daemon holds exclusively with its pid in it. Today's daemons hold it shared and write
// nothing there, so neither kind starts beside the other in one directory while versions mix.
func LegacyLockFile(socket string) string { return filepath.Join(filepath.Dir(socket), "daemon.lock") }

// StateHome is $XDG_STATE_HOME, or ~/.local/state when unset or relative (XDG says to ignore
// relative values).
func StateHome(getenv func(string) string) (string, error) {
	if s := getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return s, nil
	}
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// Home is $HOME as getenv sees it, else the account's home directory.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("cannot find the home directory: HOME is unset")
	}
	return h, nil
}

// LogFile is the daemon's default log: beside its socket, in the socket's own private
// directory, named after the socket (mcp.sock → mcp.log), so two daemons on two sockets of
// one directory keep a log each. Like the socket, it depends on the uid (or the socket named)
// alone: it used to follow $HOME and $XDG_STATE_HOME, so whichever harness autostarted the
// daemon chose its log, a harness without HOME started no daemon, and a HOME another user had
// made in /tmp blocked autostart.
func LogFile(socket string) string { return strings.TrimSuffix(socket, ".sock") + ".log" }

// ServiceFile is where `resmongw install` writes the per-user service under home, and where
// the shim and status look for it: the systemd user unit on Linux
// (~/.config/systemd/user/resmongw.service, the path kardianos/service writes for a user
// service whatever $XDG_CONFIG_HOME says), the LaunchAgent plist on macOS; "" elsewhere.
func ServiceFile(home string) string {
	switch runtime.GOOS {
	case "linux":
		return filepath.Join(home, ".config", "systemd", "user", systemd.UnitName)
	case "darwin":
		return filepath.Join(home, "Library", "LaunchAgents", launchd.Label+".plist")
	}
	return ""
}
