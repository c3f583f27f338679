package daemon_test

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"
)

// B5: SIGHUP (a closed terminal, a supervisor's reload) is a graceful shutdown: exit 0, the
// socket removed, and the buffered log flushed to the file.
func TestSIGHUPShutsDownCleanly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon()
	if err := syscall.Kill(d.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not exit after SIGHUP")
	}
	if err := d.Err(); err != nil {
		t.Fatalf("exit after SIGHUP: %v (want 0)\n%s", err, d.stderr)
	}
	if _, err := os.Lstat(w.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind after SIGHUP: %v", err)
	}
	b, err := os.ReadFile(w.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"shutting down"`, `"signal":"hangup"`, `"daemon stopped"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("log lacks %s:\n%s", want, b)
		}
	}
}

// SIGTERM with a session open: the daemon closes it and exits 0; the shim, whose harness
// still had it open, says the daemon ended the session and exits 1 (the server is gone).
func TestGracefulShutdownClosesSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	if err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.cs.Wait() }()
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		t.Fatal("session still open after the daemon stopped")
	}
	_ = s.cs.Close()
	if code := s.cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("shim exit %d after the daemon closed the stream, want 1; stderr %q", code, s.stderr)
	}
	if got := s.stderr.String(); got != shimDaemonEnded {
		t.Fatalf("shim stderr %q, want %q", got, shimDaemonEnded)
	}
}
