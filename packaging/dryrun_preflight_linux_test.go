package packaging

import (
	"os"
	"strings"
	"testing"
)

// install --dry-run runs the user-session preflight and prints its warning, but still exits 0
// and writes nothing: a dry run that said "would write" where the real install then fails
// with "no systemd user session" would be lying.
func TestDryRunWarnsWithoutAUserSession(t *testing.T) {
	f := newFakeSystemd(t)
	t.Setenv("FAKE_SYSTEMCTL_NOBUS", "1")
	code, out, errOut := runSvc(t, "install", "--dry-run")
	if code != 0 {
		t.Fatalf("install --dry-run without a user bus: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "would write "+f.unitPath()) {
		t.Errorf("dry-run output lacks the plan:\n%s", out)
	}
	if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "no systemd user session") {
		t.Errorf("dry-run did not print the preflight's warning:\n%s", errOut)
	}
	if _, err := os.Stat(f.unitPath()); !os.IsNotExist(err) {
		t.Error("dry-run wrote the unit")
	}
	if c := f.calls(t); !sameCalls(c, []string{"--user show --property=Version"}) {
		t.Errorf("dry-run ran systemctl beyond the preflight: %q", c)
	}
}

// The installer writes the unit exactly where the shim and status look for it
// (systemd.UserUnitPath), whatever XDG_CONFIG_HOME says.
func TestInstallWritesWhereTheShimLooks(t *testing.T) {
	f := newFakeSystemd(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if code, out, errOut := runSvc(t, "install", "--no-start"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(f.unitPath()); err != nil {
		t.Fatalf("unit not at %s: %v", f.unitPath(), err)
	}
}
