package daemon_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/daemon"
)

func itoa(n int) string { return strconv.Itoa(n) }

func decodeStatus(t *testing.T, out string) daemon.Status {
	t.Helper()
	var st daemon.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json is not a Status: %v\n%s", err, out)
	}
	return st
}

func TestStatusNotRunning(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	out, code := w.runStatus(ctx, nil)
	if code != 3 || !strings.Contains(out, "not running") || !strings.Contains(out, "resmongw serve") || !strings.Contains(out, "resmongw install") {
		t.Fatalf("status without a daemon: exit %d\n%s", code, out)
	}
	out, code = w.runStatus(ctx, nil, "--json")
	var m map[string]any
	if code != 3 || json.Unmarshal([]byte(out), &m) != nil || m["running"] != false {
		t.Fatalf("status --json without a daemon: exit %d\n%s", code, out)
	}
}

// Status reports the verified backend (exit 0), then why it is unavailable (exit 1), in both
// forms, and evaluates the caller's own target even before any session exists.
func TestStatusVerifiedThenUnavailable(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)

	// No session yet: the caller's env target is evaluated.
	out, code := w.runStatus(ctx, simEnv(sim), "--json")
	if code != 0 {
		t.Fatalf("status with a live backend: exit %d\n%s", code, out)
	}
	st := decodeStatus(t, out)
	if !st.OK || len(st.Targets) != 1 || !st.Targets[0].Caller {
		t.Fatalf("status: %+v", st)
	}
	tg := st.Targets[0]
	b := tg.State.Backend
	if b == nil || b.RuntimeID() != sim.RuntimeID() || b.Port != sim.Port() || b.PortSource != "port_file" {
		t.Fatalf("status backend %+v, want runtime %s on %d from the port file", b, sim.RuntimeID(), sim.Port())
	}
	if tg.State.Resolved.StateDir != sim.StateDir() || len(tg.Tokens) != 1 || tg.Tokens[0].Presence != "present" {
		t.Fatalf("status target: state dir %q tokens %+v", tg.State.Resolved.StateDir, tg.Tokens)
	}
	if st.Daemon.PID == 0 || st.Daemon.Socket != w.Socket || st.Daemon.LogFile != w.LogFile() || st.Daemon.Version != daemon.Version {
		t.Fatalf("status daemon %+v", st.Daemon)
	}

	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	healthRuntimeID(ctx, t, s.cs)
	human, code := w.runStatus(ctx, simEnv(sim))
	for _, want := range []string{"resmongw " + daemon.Version, w.Socket, sim.StateDir(), "present", sim.RuntimeID(),
		"from port_file", "tool health", "2 calls, 0 errors", "session 1", "1 session(s)"} {
		if !strings.Contains(human, want) {
			t.Errorf("status output lacks %q:\n%s", want, human)
		}
	}
	if code != 0 {
		t.Fatalf("status exit %d", code)
	}

	// Backend gone: exit 1, the reason, and a failed call counted.
	if err := sim.Stop(); err != nil {
		t.Fatal(err)
	}
	call(ctx, t, s.cs, "health", nil)
	out, code = w.runStatus(ctx, simEnv(sim), "--json")
	if code != 1 {
		t.Fatalf("status with the backend stopped: exit %d\n%s", code, out)
	}
	st = decodeStatus(t, out)
	u := st.Targets[0].State.Unavailable
	if st.OK || u == nil || u.Reason == "" || u.Message == "" {
		t.Fatalf("status unavailable: %+v", st.Targets[0].State)
	}
	var health *daemon.ToolStatus
	for i := range st.Targets[0].Tools {
		if st.Targets[0].Tools[i].Tool == "health" {
			health = &st.Targets[0].Tools[i]
		}
	}
	if health == nil || health.Calls != 3 || health.Errors["backend_unavailable"] != 1 || health.LastRuntimeID == "" {
		t.Fatalf("health stats %+v", health)
	}
	human, code = w.runStatus(ctx, simEnv(sim))
	if code != 1 || !strings.Contains(human, "unavailable ("+string(u.Reason)+")") || !strings.Contains(human, "tried") {
		t.Fatalf("status (human) with the backend stopped: exit %d\n%s", code, human)
	}
}
