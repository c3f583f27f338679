// Package endpoint is where the stdio shim and the daemon meet: the socket path both resolve
// the same way, and the one-line preamble and reply exchanged before the MCP session starts.
// It is stdlib only, because the shim imports it and must stay tiny.
package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Protocol is the preamble version both sides speak.
const Protocol = 1

// Preamble kinds.
const (
	KindMCP    = "mcp"    // the rest of the stream is an MCP session
	KindStatus = "status" // the daemon writes its status JSON and closes
)

// MaxPreamble bounds the first line; anything longer is refused.
const MaxPreamble = 64 << 10

// SocketEnv overrides the socket path for both the daemon and the shim.
const SocketEnv = "RESMONGW_SOCKET"

// NoAutostartEnv, set to 1, stops the shim from starting the daemon.
const NoAutostartEnv = "RESMONGW_NO_AUTOSTART"

// EnvKeys are the harness variables the shim forwards. They mirror discovery.EnvKeys, which
// this package cannot import (it would pull the daemon's dependencies into the shim); a daemon
// test keeps the two lists equal.
var EnvKeys = []string{"RESMON_PORT", "RESMON_STATE_DIR", "RESMON_PORT_FILE", "RESMON_DB_PATH", "HOME", "XDG_STATE_HOME"}

// Preamble is the first line a client writes on the socket.
type Preamble struct {
	Resmongw int               `json:"resmongw"`
	Kind     string            `json:"kind"`
	Env      map[string]string `json:"env"`
	PID      int               `json:"pid"`  // the shim's own pid (the daemon checks it against the peer credentials)
	PPID     int               `json:"ppid"` // the harness's pid
	Client   string            `json:"client"`
}

// Reply is the daemon's first line on an MCP connection: OK, or why the connection is refused.
// The shim consumes it and never forwards it to the harness.
type Reply struct {
	Resmongw int    `json:"resmongw"`
	OK       bool   `json:"ok"`
	Version  string `json:"version,omitempty"`
	Error    string `json:"error,omitempty"`
}

// pathKeys are the forwarded variables that name files. A relative one means relative to the
// harness's working directory, which the daemon does not share, so CaptureEnv makes it
// absolute here, on the harness's side.
var pathKeys = map[string]bool{"RESMON_STATE_DIR": true, "RESMON_PORT_FILE": true, "RESMON_DB_PATH": true}

// CaptureEnv collects the forwarded variables that are set and non-empty, with relative
// RESMON_* paths made absolute against our working directory.
func CaptureEnv(getenv func(string) string) map[string]string {
	env := make(map[string]string, len(EnvKeys))
	for _, k := range EnvKeys {
		v := getenv(k)
		if v == "" {
			continue
		}
		if pathKeys[k] && !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		env[k] = v
	}
	return env
}

// LockFile is the daemon's single-instance lock, next to its socket.
func LockFile(socket string) string { return filepath.Join(filepath.Dir(socket), "daemon.lock") }

// SocketGone is what the shim and status say when no socket file exists but a live daemon
// holds the lock: it re-creates a removed socket at its next check.
func SocketGone(pid int, socket string) string {
	return fmt.Sprintf("pid %d holds the lock but its socket %s is gone; it will recreate it within a few seconds (or restart it)", pid, socket)
}

// Line encodes v as one JSON line.
func Line(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only plain structs and maps are ever passed
		panic(err)
	}
	return append(b, '\n')
}

// maxSunPath is sun_path's size less the terminating NUL: 108 bytes on Linux, 104 on the BSDs.
func maxSunPath() int {
	if runtime.GOOS == "linux" {
		return 107
	}
	return 103
}

// ErrPathTooLong is returned for a socket path the kernel cannot bind.
var ErrPathTooLong = errors.New("socket path too long")

// SocketPath resolves the daemon's socket: flag, then $RESMONGW_SOCKET, then the platform
// default. Daemon and shim call this same function, so they always agree.
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
func SocketPath(flag string, getenv func(string) string) (string, error) {
	p := flag
	if p == "" {
		p = getenv(SocketEnv)
	}
	if p == "" {
		var err error
		if p, err = defaultSocketPath(getenv); err != nil {
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

func defaultSocketPath(getenv func(string) string) (string, error) {
	if runtime.GOOS == "darwin" {
		home, err := homeDir(getenv)
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

// StateHome is $XDG_STATE_HOME, or ~/.local/state when unset or relative (XDG says to ignore
// relative values).
func StateHome(getenv func(string) string) (string, error) {
	if s := getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return s, nil
	}
	home, err := homeDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

func homeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("cannot find the home directory: HOME is unset")
	}
	return h, nil
}
