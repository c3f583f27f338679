package packaging

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// fakeSystemd is a temporary HOME with a fake systemctl first on PATH that records its
// argv, one call per line, and (with FAKE_SYSTEMCTL_NOBUS set) fails like systemctl
// without a user bus. These tests use t.Setenv and kardianos' global system choice, so
// they run serially.
type fakeSystemd struct {
	home, log, bin string
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	root := t.TempDir()
	f := &fakeSystemd{home: filepath.Join(root, "home"), log: filepath.Join(root, "systemctl.log")}
	pathDir := filepath.Join(root, "path")
	run := filepath.Join(root, "run")
	for _, d := range []string{f.home, pathDir, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\necho \"$*\" >> \"$FAKE_SYSTEMCTL_LOG\"\n" +
		"if [ -n \"$FAKE_SYSTEMCTL_NOBUS\" ]; then echo 'Failed to connect to bus: No medium found' >&2; exit 1; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(pathDir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f.bin = f.installBinary(t, "bin")
	t.Setenv("HOME", f.home)
	t.Setenv("PATH", pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_RUNTIME_DIR", run)
	t.Setenv("FAKE_SYSTEMCTL_LOG", f.log)
	t.Setenv("FAKE_SYSTEMCTL_NOBUS", "")
	return f
}

// installBinary creates an executable file standing in for resmongw at home/<dir>/resmongw
// and makes the package believe it is the running binary.
func (f *fakeSystemd) installBinary(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(f.home, dir, "resmongw")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := executable
	executable = func() (string, error) { return p, nil }
	t.Cleanup(func() { executable = old })
	return p
}

func (f *fakeSystemd) unitPath() string {
	return filepath.Join(f.home, ".config", "systemd", "user", "resmongw.service")
}

// calls returns the systemctl invocations recorded so far and forgets them.
func (f *fakeSystemd) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(f.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(f.log)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func runSvc(t *testing.T, verb string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var opts ServiceOptions
	fs := pflag.NewFlagSet(verb, pflag.ContinueOnError)
	BindServiceFlags(fs, verb, &opts)
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		t.Fatalf("%s %q: %v: not a command line cobra accepts", verb, args, err)
	}
	var o, e bytes.Buffer
	code = ServiceMain(verb, opts, &o, &e)
	return code, o.String(), e.String()
}

func sameCalls(got, want []string) bool {
	return strings.Join(got, "|") == strings.Join(want, "|")
}

func TestInstallWritesTheRenderedUnitThroughKardianos(t *testing.T) {
	f := newFakeSystemd(t)
	code, out, errOut := runSvc(t, "install")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	got, err := os.ReadFile(f.unitPath())
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderUnit(f.bin)
	if err != nil {
		t.Fatal(err)
	}
	// kardianos wrote the file with its own template engine; it must equal ours, or
	// idempotency checks and --dry-run would be lying.
	if string(got) != want {
		t.Fatalf("kardianos wrote:\n%s\nRenderUnit renders:\n%s", got, want)
	}
	wantCalls := []string{"--user show --property=Version", "enable --user resmongw.service", "daemon-reload --user", "start --user resmongw.service"}
	if c := f.calls(t); !sameCalls(c, wantCalls) {
		t.Errorf("systemctl calls = %q, want %q", c, wantCalls)
	}
	for _, s := range []string{f.unitPath(), "systemctl enable --user resmongw.service", "systemctl daemon-reload --user", "systemctl start --user resmongw.service"} {
		if !strings.Contains(out, s) {
			t.Errorf("install output does not mention %q:\n%s", s, out)
		}
	}
	if strings.Contains(errOut, "differs") {
		t.Errorf("install warned: %s", errOut)
	}
}

func TestInstallIsIdempotentAndUpgradesADifferentUnit(t *testing.T) {
	f := newFakeSystemd(t)
	if code, out, errOut := runSvc(t, "install", "--no-start"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	f.calls(t)
	first, _ := os.ReadFile(f.unitPath())

	code, out, _ := runSvc(t, "install")
	if code != 0 || !strings.Contains(out, "already installed") {
		t.Fatalf("second install: exit %d, output:\n%s", code, out)
	}
	if c := f.calls(t); len(c) != 0 {
		t.Errorf("an up-to-date install ran systemctl: %q", c)
	}
	if now, _ := os.ReadFile(f.unitPath()); !bytes.Equal(now, first) {
		t.Error("an up-to-date install changed the unit")
	}

	// The binary moved (a new go install path): the unit differs and is rewritten.
	moved := f.installBinary(t, "newbin")
	code, out, errOut := runSvc(t, "install")
	if code != 0 || !strings.Contains(out, "updated "+f.unitPath()) {
		t.Fatalf("upgrade install: exit %d\n%s%s", code, out, errOut)
	}
	want, _ := RenderUnit(moved)
	if got, _ := os.ReadFile(f.unitPath()); string(got) != want {
		t.Fatalf("unit after upgrade:\n%s\nwant:\n%s", got, want)
	}
	wantCalls := []string{"--user show --property=Version", "enable --user resmongw.service", "daemon-reload --user", "restart --user resmongw.service"}
	if c := f.calls(t); !sameCalls(c, wantCalls) {
		t.Errorf("systemctl calls = %q, want %q", c, wantCalls)
	}
}

func TestUninstallLeavesNoUnit(t *testing.T) {
	f := newFakeSystemd(t)
	if code, out, errOut := runSvc(t, "install"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	f.calls(t)
	code, out, errOut := runSvc(t, "uninstall")
	if code != 0 {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(f.unitPath()); !os.IsNotExist(err) {
		t.Fatalf("unit still there after uninstall: %v", err)
	}
	wantCalls := []string{"--user show --property=Version", "stop --user resmongw.service", "disable --user resmongw.service", "daemon-reload --user"}
	if c := f.calls(t); !sameCalls(c, wantCalls) {
		t.Errorf("systemctl calls = %q, want %q", c, wantCalls)
	}
	if !strings.Contains(out, "removed "+f.unitPath()) {
		t.Errorf("uninstall output:\n%s", out)
	}
	code, out, _ = runSvc(t, "uninstall")
	if code != 0 || !strings.Contains(out, "not installed") {
		t.Errorf("second uninstall: exit %d\n%s", code, out)
	}
	if c := f.calls(t); len(c) != 0 {
		t.Errorf("uninstalling nothing ran systemctl: %q", c)
	}
}

func TestNoUserBusGivesTheFix(t *testing.T) {
	for _, tc := range []struct{ name, runtimeDir, nobus, reason string }{
		{"no XDG_RUNTIME_DIR", "", "", "XDG_RUNTIME_DIR is not set"},
		{"systemctl cannot reach the bus", "keep", "1", "Failed to connect to bus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSystemd(t)
			if tc.runtimeDir == "" {
				t.Setenv("XDG_RUNTIME_DIR", "")
			}
			t.Setenv("FAKE_SYSTEMCTL_NOBUS", tc.nobus)
			t.Setenv("USER", "ann")
			for _, verb := range []string{"install", "start"} {
				code, out, errOut := runSvc(t, verb)
				if code == 0 {
					t.Fatalf("%s succeeded without a user bus:\n%s", verb, out)
				}
				if verb == "start" {
					if !strings.Contains(errOut, "not installed") {
						t.Errorf("start without a unit: %s", errOut)
					}
					continue
				}
				for _, s := range []string{tc.reason, "loginctl enable-linger ann", "resmongw serve", "resmongw stdio"} {
					if !strings.Contains(errOut, s) {
						t.Errorf("%s: message lacks %q:\n%s", verb, s, errOut)
					}
				}
			}
			if _, err := os.Stat(f.unitPath()); !os.IsNotExist(err) {
				t.Error("a unit was written although the user manager is unreachable")
			}
			for _, c := range f.calls(t) {
				if c != "--user show --property=Version" {
					t.Errorf("systemctl %s ran without a user bus", c)
				}
			}
		})
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	f := newFakeSystemd(t)
	code, out, errOut := runSvc(t, "install", "--dry-run")
	if code != 0 {
		t.Fatalf("install --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	want, _ := RenderUnit(f.bin)
	if !strings.Contains(out, want) || !strings.Contains(out, "would write "+f.unitPath()) || !strings.Contains(out, "systemctl start --user resmongw.service") {
		t.Errorf("dry-run output lacks the unit, its path or the commands:\n%s", out)
	}
	if _, err := os.Stat(f.unitPath()); !os.IsNotExist(err) {
		t.Error("dry-run wrote the unit")
	}
	// Only the read-only preflight: nothing enabled, started or reloaded.
	if c := f.calls(t); !sameCalls(c, []string{"--user show --property=Version"}) {
		t.Errorf("dry-run ran systemctl beyond the preflight: %q", c)
	}
	if errOut != "" {
		t.Errorf("dry-run warned with a working user manager: %s", errOut)
	}
}

func TestControlVerbs(t *testing.T) {
	f := newFakeSystemd(t)
	code, _, errOut := runSvc(t, "start")
	if code == 0 || !strings.Contains(errOut, "resmongw install") {
		t.Errorf("start before install: exit %d, %s", code, errOut)
	}
	if code, out, errOut := runSvc(t, "install", "--no-start"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	f.calls(t)
	for _, verb := range []string{"start", "stop", "restart"} {
		code, out, errOut := runSvc(t, verb)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", verb, code, out, errOut)
		}
		want := []string{"--user show --property=Version", verb + " --user resmongw.service"}
		if c := f.calls(t); !sameCalls(c, want) {
			t.Errorf("%s: systemctl calls %q, want %q", verb, c, want)
		}
		if !strings.Contains(out, "systemctl "+verb+" --user resmongw.service") {
			t.Errorf("%s output:\n%s", verb, out)
		}
	}
}
