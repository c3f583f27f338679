// Package paths owns every per-user location of resmongw (home, state directory, the daemon's
// socket, lock and log, the installed service file), so daemon, shim, status and installer
// always agree; it is stdlib only, because the shim imports it.
package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

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

// Socket resolves the daemon's socket: flag, then $RESMONGW_SOCKET, then the platform
// default. Daemon, shim and status call this same function, so they always agree.
//
// Defaults:
//   - Linux: $XDG_RUNTIME_DIR/resmongw/mcp.sock (per-user tmpfs, 0700, made by logind). When
//     XDG_RUNTIME_DIR is unset (su -, cron, some IDEs) but logind's /run/user/<uid> exists,
//     that directory: it is what the systemd user service gets as XDG_RUNTIME_DIR, so a
//     harness started without the variable still finds the service's daemon instead of
//     autostarting a second one on another socket. Otherwise (containers, no logind):
//     $XDG_STATE_HOME/resmongw/run/mcp.sock, or ~/.local/state/resmongw/run/mcp.sock.
//     We prefer a HOME-derived path to os.TempDir():
//     /tmp is shared, so another user could pre-create our directory and lock us out, and tmp
//     cleaners may delete a long-lived socket.
//   - macOS: ~/Library/Application Support/resmongw/mcp.sock. $TMPDIR is per-user but an env
//     variable a GUI harness, the launchd agent and a terminal may not agree on; HOME is stable.
func Socket(flag string, getenv func(string) string) (string, error) {
	p := flag
	if p == "" {
		p = getenv(SocketEnv)
	}
	if p == "" {
		var err error
		if p, err = defaultSocket(getenv); err != nil {
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

func defaultSocket(getenv func(string) string) (string, error) {
	if runtime.GOOS == "darwin" {
		home, err := Home(getenv)
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "resmongw", "mcp.sock"), nil
	}
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		return filepath.Join(rt, "resmongw", "mcp.sock"), nil
	}
	if rt := loginRuntimeDir(); rt != "" && isLoginRuntimeDir(rt) {
		return filepath.Join(rt, "resmongw", "mcp.sock"), nil
	}
	state, err := StateHome(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "resmongw", "run", "mcp.sock"), nil
}

// LockFile is the daemon's single-instance lock, next to its socket.
func LockFile(socket string) string { return filepath.Join(filepath.Dir(socket), "daemon.lock") }

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

// LogFile is the daemon's default log: Linux $XDG_STATE_HOME/resmongw/resmongw.log (or
// ~/.local/state/…), macOS ~/Library/Logs/resmongw/resmongw.log.
func LogFile(getenv func(string) string) (string, error) {
	if runtime.GOOS == "darwin" {
		home, err := Home(getenv)
		if err != nil {
			return "", err
		}
		return filepath.Join(home, launchd.LogDir, "resmongw.log"), nil
	}
	state, err := StateHome(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "resmongw", "resmongw.log"), nil
}

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
