package daemon_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/toolfacts"
)

// The first shim finds no daemon, starts one detached, and is served by it; the daemon
// outlives the session, and later shims reuse it.
func TestAutostartServesSession(t *testing.T) {
	t.Parallel()
	w, sim, ctx := unservedWorld(t)

	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	pid := w.DaemonPID()
	if pid == 0 || !testkit.Alive(pid) {
		t.Fatalf("no daemon after autostart (lock pid %d)", pid)
	}
	tools, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(toolfacts.Rows) {
		t.Fatalf("tools/list: %d tools, want %d", len(tools.Tools), len(toolfacts.Rows))
	}
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("health runtime id %s, want the simulator's %s", got, sim.RuntimeID())
	}
	if err := s.cs.Close(); err != nil {
		t.Fatalf("closing the session: %v (shim stderr %q)", err, s.stderr)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("shim exit code %d after stdin closed", code)
	}

	// A second harness (default protocol this time) reuses the same daemon.
	s2 := w.connect(ctx, "", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s2.cs); got != sim.RuntimeID() {
		t.Fatalf("second session: runtime id %s, want %s", got, sim.RuntimeID())
	}
	if again := w.DaemonPID(); again != pid {
		t.Fatalf("second session started another daemon: pid %d, first %d", again, pid)
	}
}

// With autostart disabled and no daemon, the shim says so on stderr, starts nothing, and keeps
// the session (issue 25.4; TestSessionOutlivesNoDaemon): here the harness hangs up at once,
// which is a normal end.
func TestNoAutostart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.Env("RESMONGW_NO_AUTOSTART=1")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("shim without daemon: %v, want exit 0 once the harness hung up", err)
	}
	if stdout.String() != "" {
		t.Fatalf("shim wrote to stdout: %q", stdout.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "not running") || strings.Count(msg, "\n") != 1 {
		t.Fatalf("stderr %q: want one line saying the daemon is not running", msg)
	}
	if w.DaemonPID() != 0 {
		t.Fatal("a daemon was started although autostart is off")
	}
}

// The daemon is killed: the socket is left behind, open sessions go on on a daemon their shim
// autostarts (it replaces the stale socket), and the next shim finds that daemon.
func TestDaemonKilledNextShimAutostarts(t *testing.T) {
	t.Parallel()
	w, sim, ctx := unservedWorld(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	old := w.DaemonPID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitGone(old, testkit.WaitLimit) {
		t.Fatal("killed daemon still alive")
	}
	if _, err := os.Lstat(w.Socket); err != nil {
		t.Fatalf("a SIGKILLed daemon should leave its socket behind: %v", err)
	}
	// The old session's shim starts a new daemon and the session goes on there.
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("the old session after the kill: runtime id %s", got)
	}
	if got := s.stderr.String(); got != "" {
		t.Fatalf("old shim stderr %q, want nothing", got)
	}

	s2 := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s2.cs); got != sim.RuntimeID() {
		t.Fatalf("after daemon restart: runtime id %s", got)
	}
	if now := w.DaemonPID(); now == 0 || now == old {
		t.Fatalf("no new daemon: pid %d (old %d)", now, old)
	}
}
