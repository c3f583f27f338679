package daemonctl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/statusdoc"
)

// privateDaemonNote warns, in status's human forms, when status was pointed at a socket other
// than the per-user default (RESMONGW_SOCKET or --socket): the daemon there is a private one,
// and harnesses, whose entries set no RESMONGW_SOCKET, reach the default daemon instead, so
// what status shows is not what they get.
func privateDaemonNote(w io.Writer, socket, flag string, getenv func(string) string) {
	def, err := paths.DefaultSocket()
	if err != nil || filepath.Clean(def) == filepath.Clean(socket) {
		return
	}
	how, undo := paths.SocketEnv+" is set", "unset it"
	if flag != "" {
		how, undo = "--socket names a socket", "drop --socket"
	}
	fmt.Fprintf(w, "WARNING: private daemon: %s, so this is not the default daemon your harnesses use\n"+
		"  (%s) unless they were started with the same setting; %s to see that one.\n", how, def, undo)
}

// neverRan is the short form for a target whose resmon has never run with its state
// directory (it does not exist): a friendly line and the next step instead of the discovery
// error. status runs as the daemon's user on the same machine, so it can look.
func neverRan(w io.Writer, n int, note, use string, t statusdoc.TargetStatus) bool {
	dir := t.State.Resolved.StateDir
	if t.State.Unavailable == nil || dir == "" {
		return false
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	fmt.Fprintf(w, "target %d%s, %s: resmon has not run here yet (no state directory %s)\n", n, note, use, dir)
	if t.State.Resolved.StateDirSource == "default" {
		fmt.Fprintf(w, "  next: start the resmon app once; resmongw finds it by itself. If resmon keeps its state\n"+
			"  elsewhere, set RESMON_STATE_DIR to that directory (resmongw config <harness> --state-dir DIR).\n")
	} else {
		fmt.Fprintf(w, "  next: start resmon with this state directory, or point RESMON_STATE_DIR at the one it uses.\n")
	}
	return true
}
