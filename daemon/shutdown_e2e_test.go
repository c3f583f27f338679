package daemon_test

import (
	"bytes"
	"os"
	"strings"
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

// SIGTERM with a session open: the daemon drains it and exits 0, and the shim keeps the
// harness's session for the next daemon. Here nobody starts one (autostart off, a short
// reconnect bound): the shim says so in one line and keeps the session itself (issue 25.4),
// each call answering why no daemon serves it, until one does.
func TestGracefulShutdownWithoutANewDaemonKeepsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", append(simEnv(sim), "RESMONGW_NO_AUTOSTART=1", "RESMONGW_RECONNECT_WAIT=1s")...)
	healthRuntimeID(ctx, t, s.cs)
	if err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
	}
	r := call(ctx, t, s.cs, "health", nil)
	if msg, _ := r.payload["message"].(string); !r.isError || !strings.Contains(msg, "the daemon is not running") {
		t.Fatalf("a call once no daemon came back: %v", r.payload)
	}
	if got := s.stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "none came back within 1s") {
		t.Fatalf("shim stderr %q, want one line saying no daemon came back", got)
	}
	w.startDaemon()
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("once a daemon is back: runtime id %s", got)
	}
	if err := s.cs.Close(); err != nil {
		t.Fatalf("closing the session: %v", err)
	}
}

// SIGTERM, then a fresh `serve` (what a service manager's restart does): the same harness
// session goes on on the new daemon, which status shows serving it under the harness's name.
func TestGracefulShutdownThenAFreshServeKeepsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", append(simEnv(sim), "RESMONGW_NO_AUTOSTART=1")...)
	healthRuntimeID(ctx, t, s.cs)
	if err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
	}
	w.startDaemon()
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("after the restart: runtime id %s", got)
	}
	out, _ := w.runStatus(ctx, simEnv(sim), "--json")
	if st := decodeStatus(t, out); len(st.Sessions) != 1 || st.Sessions[0].ClientName != "e2e" {
		t.Fatalf("sessions on the new daemon: %+v", st.Sessions)
	}
	if got := s.stderr.String(); got != "" {
		t.Fatalf("shim stderr %q, want nothing", got)
	}
	// The harness ends its session while the new daemon still runs: its cleanup was
	// registered before this daemon's, so it would otherwise run after the daemon is gone and
	// find a shim still waiting for a daemon to come back.
	if err := s.cs.Close(); err != nil {
		t.Fatalf("closing the session on the new daemon: %v", err)
	}
}
