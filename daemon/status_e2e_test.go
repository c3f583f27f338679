package daemon_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/version"
)

func itoa(n int) string { return strconv.Itoa(n) }

func decodeStatus(t *testing.T, out string) statusdoc.Status {
	t.Helper()
	var st statusdoc.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json is not a Status: %v\n%s", err, out)
	}
	return st
}

func TestStatusNotRunning(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	w, sim, ctx := servedWorld(t)

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
	if st.Daemon.PID == 0 || st.Daemon.Socket != w.Socket || st.Daemon.LogFile != w.LogFile() || st.Daemon.Version != version.Version {
		t.Fatalf("status daemon %+v", st.Daemon)
	}

	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	healthRuntimeID(ctx, t, s.cs)
	// The default form: a line or two per target, the simulator flagged; the rest is --verbose.
	human, code := w.runStatus(ctx, simEnv(sim))
	for _, want := range []string{"resmongw " + version.Version, w.Socket, sim.StateDir(), "SIMULATED",
		"2 calls, 0 errors", "session 1", "1 session(s)"} {
		if !strings.Contains(human, want) {
			t.Errorf("status output lacks %q:\n%s", want, human)
		}
	}
	if lines := strings.Count(human, "\n"); code != 0 || lines > 6 {
		t.Fatalf("status exit %d, %d lines (want 0, one screen):\n%s", code, lines, human)
	}
	verbose, code := w.runStatus(ctx, simEnv(sim), "--verbose")
	for _, want := range []string{"resmongw " + version.Version, w.Socket, w.LogFile(), sim.StateDir(), "present", sim.RuntimeID(),
		"from port_file", "tool health", "2 calls, 0 errors", "session 1", "1 session(s)", "SIMULATED"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("status --verbose lacks %q:\n%s", want, verbose)
		}
	}
	if code != 0 {
		t.Fatalf("status --verbose exit %d", code)
	}
	if out, _ := w.runStatus(ctx, simEnv(sim), "--json"); !decodeStatus(t, out).Targets[0].State.Backend.Simulated {
		t.Errorf("status --json: the backend is not marked simulated:\n%s", out)
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
	var health *statusdoc.ToolStatus
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

func targetByDir(t *testing.T, st statusdoc.Status, stateDir string) statusdoc.TargetStatus {
	t.Helper()
	for _, tg := range st.Targets {
		if tg.State.Resolved.StateDir == stateDir {
			return tg
		}
	}
	t.Fatalf("no target for %s in %+v", stateDir, st.Targets)
	return statusdoc.TargetStatus{}
}

// A target the daemon keeps idle after its last use (here: an earlier status call for an
// instance that is not running) is listed, marked idle, and does not make status fail; once a
// session uses it, it counts again.
func TestStatusExitCodeIgnoresIdleTargets(t *testing.T) {
	t.Parallel()
	w, sim, ctx := servedWorld(t)
	goneDir := filepath.Join(t.TempDir(), "gone")
	gone := []string{"RESMON_STATE_DIR=" + goneDir}

	if out, code := w.runStatus(ctx, gone, "--json"); code != 1 {
		t.Fatalf("status for an instance that is not running: exit %d\n%s", code, out)
	}

	out, code := w.runStatus(ctx, simEnv(sim), "--json")
	st := decodeStatus(t, out)
	if code != 0 || !st.OK || len(st.Targets) != 2 {
		t.Fatalf("status with an idle unverified target: exit %d\n%s", code, out)
	}
	idle, own := targetByDir(t, st, goneDir), targetByDir(t, st, sim.StateDir())
	if !idle.Idle || idle.Verified || idle.Caller || idle.Sessions != 0 || own.Idle || !own.Caller || !own.Verified {
		t.Fatalf("idle %+v\nown %+v", idle, own)
	}
	human, code := w.runStatus(ctx, simEnv(sim))
	if code != 0 || !strings.Contains(human, "target 2 (idle") || !strings.Contains(human, goneDir) {
		t.Fatalf("human status: exit %d\n%s", code, human)
	}

	// A session on the unverified target: it is no longer idle, and status fails.
	w.connect(ctx, "2025-11-25", gone...)
	out, code = w.runStatus(ctx, simEnv(sim), "--json")
	st = decodeStatus(t, out)
	used := targetByDir(t, st, goneDir)
	if code != 1 || st.OK || used.Idle || used.Sessions != 1 {
		t.Fatalf("status with a session on an unverified target: exit %d\n%s", code, out)
	}
}

// Stray positional arguments are usage errors (exit 2), for status and for the shim a
// harness config launches.
func TestExtraArgumentsAreUsageErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	if out, code := w.runStatus(ctx, nil, "extra"); code != 2 {
		t.Fatalf("status extra: exit %d\n%s", code, out)
	}
	cmd := exec.CommandContext(ctx, bin, "stdio", "extra")
	cmd.Env = w.Env("RESMONGW_NO_AUTOSTART=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `"extra"`) {
		t.Fatalf("stdio extra: %v\n%s", err, out)
	}
}

// Issue 25.6f/h: status pointed at a private daemon (RESMONGW_SOCKET, as every test world
// is) says so and names the default daemon harnesses use; and a resmon that never ran (its
// state directory does not exist) gets a friendly short form with the next step, not the
// discovery error.
func TestStatusWarnsOfAPrivateDaemonAndExplainsAResmonThatNeverRan(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	ctx := testCtx(t)
	never := filepath.Join(w.Home, "no-resmon-here")
	out, code := w.runStatus(ctx, []string{"RESMON_STATE_DIR=" + never})
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"WARNING: private daemon: RESMONGW_SOCKET is set, so this is not the default daemon your harnesses use",
		"unless they were started with the same setting; unset it to see that one.",
		"resmon has not run here yet (no state directory " + never + ")",
		"next: start resmon with this state directory",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No local API token") {
		t.Errorf("the short form shows the discovery error:\n%s", out)
	}
	if out, _ := w.runStatus(ctx, []string{"RESMON_STATE_DIR=" + never}, "--json"); strings.Contains(out, "WARNING") {
		t.Errorf("--json carries a human warning:\n%s", out)
	}
	// Asked at the default socket, no warning: daemonctl's TestPrivateDaemonNoteOnlyOffTheDefault.
}
