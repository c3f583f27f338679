package daemon

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// handOver restarts the daemon only for a session of another version whose shim runs the file
// that replaced the daemon's own: here a copy of sleep plays the new binary, renamed over the
// path the daemon was "started" from.
func TestHandOverOnlyToTheFileThatReplacedOurs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the shim's binary is checked through /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "resmongw")
	copyExecutable(t, sleep, exe)
	d, cancel := newDaemon(filepath.Join(dir, "s.sock"), "", zap.NewNop(), slog.New(slog.DiscardHandler), time.Hour, nil)
	defer cancel()
	started, _ := os.Stat(exe)
	d.exe = executable{path: exe, file: started}

	newer := filepath.Join(dir, "resmongw.new")
	copyExecutable(t, sleep, newer)
	shim := exec.Command(newer, "60")
	// A child forked elsewhere in this process may still hold the copy's write descriptor for
	// a moment (ETXTBSY); that passes as soon as the child execs.
	for tries := 1; ; tries++ {
		err := shim.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || tries == 1000 {
			t.Fatal(err)
		}
		shim = exec.Command(newer, "60")
	}
	defer func() { _ = shim.Process.Kill(); _ = shim.Wait() }()
	other := &sessionwire.Preamble{Version: version.Version + "-next"}
	if d.handOver(other, shim.Process.Pid) {
		t.Fatal("handed over while our own file is unchanged")
	}
	if err := os.Rename(newer, exe); err != nil { // the upgrade
		t.Fatal(err)
	}
	if d.handOver(&sessionwire.Preamble{Version: version.Version}, shim.Process.Pid) {
		t.Fatal("handed over to a session of our own version")
	}
	if d.handOver(&sessionwire.Preamble{}, shim.Process.Pid) {
		t.Fatal("handed over to an old shim that sends no version")
	}
	if d.handOver(other, os.Getpid()) {
		t.Fatal("handed over to a shim that runs another file")
	}
	select {
	case m := <-d.stopReq:
		t.Fatalf("a stop was asked for (%v) though nothing qualified", m)
	default:
	}
	if !d.handOver(other, shim.Process.Pid) {
		t.Fatal("no hand-over to the shim running the file now at our path")
	}
	if m := <-d.stopReq; m != stopRestart {
		t.Fatalf("asked for %v, want a restart (sessions reconnect)", m)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
