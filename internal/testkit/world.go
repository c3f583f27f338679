package testkit

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// World is one user's private environment for one test: a home, a state home and a socket
// path, and the environment that points resmongw's processes at them.
type World struct {
	T         testing.TB
	Home      string
	StateHome string
	Socket    string
}

// NewWorld makes a world in the test's temporary directories, removed when the test ends.
func NewWorld(t testing.TB) *World {
	t.Helper()
	home := t.TempDir()
	return &World{T: t, Home: home, StateHome: filepath.Join(home, "state"),
		Socket: filepath.Join(ShortTempDir(t), "run", "mcp.sock")}
}

// ShortTempDir is a temporary directory, removed when the test ends, whose path is short
// enough for a socket in it: sun_path holds about 100 bytes, and t.TempDir's paths carry the
// test's name.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// NoRaceExitSleep is in the environment of every child a test starts. A binary built with
// -race sleeps a second at exit by default (atexit_sleep_ms=1000), so that goroutines still
// running can report races; a report already under way is still completed without it (the
// race runtime takes its report lock before exiting). The tests wait for every daemon and
// shim exit they cause, so that second, paid on every exit, was most of the suite's time.
const NoRaceExitSleep = "GORACE=atexit_sleep_ms=0"

// Env is a clean environment for the world's processes (nothing leaks in from the test
// process but PATH), with extra appended.
func (w *World) Env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.Home,
		"XDG_STATE_HOME=" + w.StateHome,
		"RESMONGW_SOCKET=" + w.Socket,
		NoRaceExitSleep,
	}, extra...)
}

// LogFile is where the daemon logs: beside its socket, named after it.
func (w *World) LogFile() string { return strings.TrimSuffix(w.Socket, ".sock") + ".log" }

// LockFile is the daemon's lock file, the socket's path plus ".lock" (paths.LockFile, which
// testkit cannot import: paths' own tests use testkit).
func (w *World) LockFile() string { return w.Socket + ".lock" }

// DaemonPID is the pid the running daemon wrote into its lock file (0 when there is none).
func (w *World) DaemonPID() int {
	pid, _ := ReadPIDFile(w.LockFile())
	return pid
}

// Serve starts `bin serve --socket <the world's socket> args...` in the world's environment,
// its output to stdout and stderr (nil discards), and waits until it listens or exits. The
// caller stops the process.
func (w *World) Serve(bin string, stdout, stderr io.Writer, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--socket", w.Socket}, args...)...)
	cmd.Env = w.Env()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	p, err := Start(cmd)
	if err != nil {
		return nil, err
	}
	if err := WaitListening(w.Socket, WaitLimit, p); err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return p, nil
}
