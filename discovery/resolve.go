package discovery

import (
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/resmongw/resmongw/paths"
)

// TargetFromEnv builds a Target from an os.Getenv-compatible lookup.
func TargetFromEnv(getenv func(string) string) Target {
	return Target{
		Port:         getenv("RESMON_PORT"),
		StateDir:     getenv("RESMON_STATE_DIR"),
		PortFile:     getenv("RESMON_PORT_FILE"),
		DBPath:       getenv("RESMON_DB_PATH"),
		Home:         getenv("HOME"),
		XDGStateHome: getenv("XDG_STATE_HOME"),
	}
}

// Resolve works out the state directory and the port file the way resmon itself does
// (reference §5.1, backend §3.4/§3.6), from the Target's own variables: the daemon
// serves many harnesses, so its own environment must not leak into the answer.
func (t Target) Resolve() Resolved {
	var r Resolved
	if t.StateDir != "" {
		r.StateDir, r.StateDirSource = filepath.Clean(t.StateDir), "RESMON_STATE_DIR"
	} else {
		r.StateDir, r.StateDirSource = defaultStateDir(t), "default"
	}
	switch {
	case t.PortFile != "":
		r.PortFile, r.PortFileSource = filepath.Clean(t.PortFile), "RESMON_PORT_FILE"
	case t.DBPath != "":
		// The port file lives beside the database, not necessarily in the state dir.
		r.PortFile, r.PortFileSource = filepath.Join(filepath.Dir(t.DBPath), PortFileName), "RESMON_DB_PATH"
	default:
		r.PortFile, r.PortFileSource = filepath.Join(r.StateDir, PortFileName), "state_dir"
	}
	return r
}

// home is the Target's HOME, or the daemon's own home only when the harness sent none.
func (t Target) home() string {
	if t.Home != "" {
		return t.Home
	}
	h, _ := paths.Home(func(string) string { return "" })
	return h
}

// defaultStateDir is resmon's own default: ~/Library/Application Support/resmon on macOS,
// the XDG state directory everywhere else.
func defaultStateDir(t Target) string {
	if runtime.GOOS == "darwin" {
		h := t.home()
		if h == "" {
			return ""
		}
		return filepath.Join(h, "Library", "Application Support", "resmon")
	}
	return xdgStateDir(t)
}

// xdgStateDir is the Linux/POSIX default: $XDG_STATE_HOME/resmon, else ~/.local/state/resmon.
func xdgStateDir(t Target) string {
	if t.XDGStateHome != "" {
		return filepath.Join(t.XDGStateHome, "resmon")
	}
	h := t.home()
	if h == "" {
		return ""
	}
	return filepath.Join(h, ".local", "state", "resmon")
}

// Key is the canonical identity of the backend a Target means: two targets with the same
// key share one watcher. It is built from the resolved paths and RESMON_PORT (normalised
// when it is a number), so spelling differences in the environment do not split watchers.
// It is printable (paths quoted), so it can go in logs as is.
func (t Target) Key() string {
	r := t.Resolve()
	// The same parser the candidates use: a value it refuses ("+36721", "0008742") must not
	// share a watcher with the valid port it resembles, or one session's bad RESMON_PORT
	// would decide what the other's good one gets.
	port := ""
	if n, ok := parsePort(t.Port); ok {
		port = strconv.Itoa(n)
	} else if t.Port != "" {
		port = strconv.Quote(t.Port) // garbage stays distinct, and distinct from unset
	}
	return "state_dir=" + strconv.Quote(r.StateDir) + " port_file=" + strconv.Quote(r.PortFile) + " port=" + port
}
