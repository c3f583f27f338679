package daemon

import (
	"os"
	"runtime"
	"strconv"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// executable is the binary this daemon runs from: its path and the file it was at start, so
// the daemon can tell when a package manager has renamed a new build over it.
type executable struct {
	path string
	file os.FileInfo
}

// currentExecutable is this process's binary, or the zero value when it cannot be found
// (then the daemon never hands over).
func currentExecutable() executable {
	p, err := os.Executable() // on Linux, /proc/self/exe without its " (deleted)" suffix
	if err != nil {
		return executable{}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return executable{}
	}
	return executable{path: p, file: fi}
}

// replaced reports whether the file at our path is no longer the one we run, and returns it.
func (e executable) replaced() (os.FileInfo, bool) {
	if e.path == "" {
		return nil, false
	}
	cur, err := os.Stat(e.path)
	if err != nil || os.SameFile(cur, e.file) {
		return nil, false
	}
	return cur, true
}

// handOver decides whether a new session (preamble pre, from the shim with pid) means a newer
// binary is installed at our path, and if so asks for a graceful restart: the same stop as
// `resmongw restart`, so open sessions reconnect to the next daemon, which the shims (or the
// service) start from the new file. It hands over only when all three hold: the session's
// version differs from ours, the file at our path is no longer the one we run, and (on Linux,
// where the peer's binary is visible) the shim runs that very file. A shim from another path,
// or an older shim without a version, never makes the daemon restart.
func (d *daemon) handOver(pre *sessionwire.Preamble, pid int) bool {
	if pre.Version == "" || pre.Version == version.Version {
		return false
	}
	cur, ok := d.exe.replaced()
	if !ok {
		return false
	}
	if runtime.GOOS == "linux" {
		if peer, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && !os.SameFile(peer, cur) {
			return false
		}
	}
	if d.handingOver.CompareAndSwap(false, true) {
		d.log.Info("a newer binary is installed at our path; handing over to it",
			zap.String("running", version.Version), zap.String("installed", pre.Version),
			zap.String("executable", d.exe.path), zap.Int("pid", pid))
		d.requestStop(stopRestart)
	}
	return true
}
