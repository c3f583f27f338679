package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/doctor"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// buildVersion builds resmongw with version.Version set to v (as a release build sets it).
func buildVersion(t *testing.T, out, v string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", out, "-ldflags", "-X github.com/resmongw/resmongw/version.Version="+v,
		"github.com/resmongw/resmongw/cmd/resmongw")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building version %s: %v\n%s", v, err, b)
	}
}

// statusText runs `exe status` in the world's environment and returns what it printed.
func (w *world) statusText(ctx context.Context, exe string, env ...string) string {
	cmd := exec.CommandContext(ctx, exe, "status")
	cmd.Env = w.Env(env...)
	out := w.output()
	cmd.Stdout, cmd.Stderr = out, out
	_ = cmd.Run()
	return out.String()
}

// The binary is replaced in place (renamed over, as package managers do) while a daemon of
// the old version serves a session. status says "running old, installed new"; a shim from
// another path changes nothing; the first new session from the replaced path makes the daemon
// hand over (a graceful restart), after which the new version serves both the new session and
// the old one, which never noticed.
func TestANewSessionHandsTheDaemonOverToTheReplacedBinary(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := testkit.ShortTempDir(t)
	exe := filepath.Join(dir, "resmongw")
	next := filepath.Join(dir, "resmongw.next")
	const oldVersion, newVersion = "1.0.0-old", "2.0.0-new"
	buildVersion(t, exe, oldVersion)
	buildVersion(t, next, newVersion)
	elsewhere := filepath.Join(testkit.ShortTempDir(t), "resmongw")
	copyFile(t, next, elsewhere)

	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 4*time.Minute)
	old := w.connectWith(ctx, exe, simEnv(sim)...) // autostarts a daemon from exe
	old.must(ctx, "health", nil)
	first := w.daemonPID()
	if v, _ := w.statusOf(ctx, simEnv(sim)...); v != oldVersion {
		t.Fatalf("daemon version %q, want %q", v, oldVersion)
	}

	// A newer binary somewhere else: the daemon's own file is unchanged, so it stays.
	other := w.connectWith(ctx, elsewhere, simEnv(sim)...)
	other.must(ctx, "health", nil)
	if pid := w.daemonPID(); pid != first {
		t.Fatalf("a shim from another path moved the daemon (pid %d, was %d)", pid, first)
	}
	w.closeSession(other.cs, other.cmd)

	if err := os.Rename(next, exe); err != nil { // the package manager's atomic replace
		t.Fatal(err)
	}
	if out := w.statusText(ctx, exe, simEnv(sim)...); !strings.Contains(out, "running "+oldVersion+", installed "+newVersion+": "+exe+" was replaced") {
		t.Errorf("status after the replace does not say running old, installed new:\n%s", out)
	}

	// doctor (the new binary) fails its version check with the way out.
	doc := exec.CommandContext(ctx, exe, "doctor", "--json")
	doc.Env = w.Env(simEnv(sim)...)
	docOut := w.output()
	doc.Stdout = docOut
	_ = doc.Run()
	var rep doctor.Report
	if err := json.Unmarshal([]byte(docOut.String()), &rep); err != nil || len(rep.Checks) == 0 ||
		rep.Checks[0].Result != doctor.Fail || rep.Checks[0].Detail != "running "+oldVersion+", installed "+newVersion || rep.Checks[0].Fix != "resmongw restart" {
		t.Errorf("doctor's version check after the replace (%v):\n%s", err, docOut)
	}

	fresh := w.connectWith(ctx, exe, simEnv(sim)...)
	fresh.must(ctx, "health", nil)
	w.waitNewDaemon(t, first)
	if v, _ := w.statusOf(ctx, simEnv(sim)...); v != newVersion {
		t.Errorf("daemon version %q after a new session met the old daemon, want %q", v, newVersion)
	}
	old.must(ctx, "health", nil) // the old session goes on, on the new daemon
	fresh.must(ctx, "list_sources", nil)
	if out := w.statusText(ctx, exe, simEnv(sim)...); strings.Contains(out, "installed") {
		t.Errorf("status still reports two versions after the hand-over:\n%s", out)
	}
	for _, s := range []*session{old, fresh} {
		if got := s.stderr.String(); got != "" {
			t.Errorf("shim stderr %q, want nothing", got)
		}
	}
}
