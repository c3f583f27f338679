//go:build linux || darwin

package shim

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/sessionwire"
)

// ExitWhenIdleEnv sets how long a daemon the shim starts stays with no session before it
// exits (a Go duration; 0 = it stays). Default DefaultExitWhenIdle. The service-managed
// daemon is not started this way and always stays.
const ExitWhenIdleEnv = "RESMONGW_EXIT_WHEN_IDLE"

// readyWait bounds the wait for a started daemon to listen (or exit); the caller's dial
// follows either way.
const readyWait = 3 * time.Second

// DefaultExitWhenIdle is an autostarted daemon's idle period: long enough that a harness
// restarted within it finds its warm daemon, short enough that nothing lingers for days.
const DefaultExitWhenIdle = 10 * time.Minute

// exitWhenIdle is the idle period of a daemon the shim starts now (0: it stays).
func exitWhenIdle(getenv func(string) string) time.Duration {
	d := DefaultExitWhenIdle
	if v := getenv(ExitWhenIdleEnv); v != "" {
		if p, err := time.ParseDuration(v); err == nil && p >= 0 {
			d = p
		}
	}
	return d
}

// startDaemon launches the daemon for the shim's autostart: it exits when idle.
func startDaemon(path string) (<-chan error, error) {
	return StartDaemon(path, exitWhenIdle(os.Getenv))
}

// StartDaemon launches `resmongw serve --socket path` from our own binary, with
// --exit-when-idle when idle is positive (0: the daemon stays): the shim's autostart (see
// ExitWhenIdleEnv), and `resmongw start` and `restart` when no service is installed. Detached: a new session (so the
// harness's signals and terminal don't reach it) with stdio on /dev/null (the daemon logs to
// its file). It is not a child we wait on, but a goroutine reaps it if it exits while we live
// (e.g. it lost the single-instance race), so it never lingers as a zombie; the channel
// reports that exit. It returns once the daemon listens (sessionwire.ReadyFDEnv: it closes the
// pipe it inherited), exits, or readyWait passes, so the caller's first dial usually connects
// instead of retrying on a timer.
func StartDaemon(path string, idle time.Duration) (<-chan error, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--socket", path}
	if idle > 0 {
		args = append(args, "--exit-when-idle", idle.String())
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	listening, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer listening.Close()
	cmd.ExtraFiles = []*os.File{w} // descriptor 3 in the daemon
	cmd.Env = append(os.Environ(), sessionwire.ReadyFDEnv+"=3")
	err = cmd.Start()
	w.Close() // the daemon holds the only write end now
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	_ = listening.SetReadDeadline(time.Now().Add(readyWait))
	_, _ = listening.Read(make([]byte, 1)) // the pipe's end: the daemon listens, or it exited
	return exited, nil
}
