package daemon_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/daemon"
)

func targetByDir(t *testing.T, st daemon.Status, stateDir string) daemon.TargetStatus {
	t.Helper()
	for _, tg := range st.Targets {
		if tg.State.Resolved.StateDir == stateDir {
			return tg
		}
	}
	t.Fatalf("no target for %s in %+v", stateDir, st.Targets)
	return daemon.TargetStatus{}
}

// A target the daemon keeps idle after its last use (here: an earlier status call for an
// instance that is not running) is listed, marked idle, and does not make status fail; once a
// session uses it, it counts again.
func TestStatusExitCodeIgnoresIdleTargets(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
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
	w := newWorld(t)
	ctx := testCtx(t)
	if out, code := w.runStatus(ctx, nil, "extra"); code != 2 {
		t.Fatalf("status extra: exit %d\n%s", code, out)
	}
	cmd := exec.CommandContext(ctx, bin, "stdio", "extra")
	cmd.Env = w.Env("RESMONGW_NO_AUTOSTART=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `unexpected argument "extra"`) {
		t.Fatalf("stdio extra: %v\n%s", err, out)
	}
}
