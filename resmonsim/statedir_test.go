package resmonsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Without --state-dir, `dev backend` works in a fresh private directory it prints, writes
// nothing anywhere else (not under HOME, not in resmon's state directory), says "simulated"
// in its health answer, and removes the directory at exit.
func TestDevBackendDefaultsToAPrivateDirectory(t *testing.T) {
	world := t.TempDir()
	home, tmp := filepath.Join(world, "home"), filepath.Join(world, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testkit.HelperCommand(ctx, mainHelper, "[]", "HOME="+home, "TMPDIR="+tmp, "XDG_STATE_HOME=")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr, cmd.Stdout = stderr, stderr
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(10 * time.Second)
	startRE := regexp.MustCompile(`listening on (http://127\.0\.0\.1:(\d+)), state dir (.+)\n`)
	var m []string
	if !testkit.Poll(ctx, func() bool { m = startRE.FindStringSubmatch(stderr.String()); return m != nil }) {
		t.Fatalf("no start line: %s", stderr.String())
	}
	dir := m[3]
	// It says how to use it next: status and a harness entry, both pointed at its directory.
	for _, next := range []string{"RESMON_STATE_DIR=" + dir + " resmongw status", "resmongw config claude-code --state-dir " + dir, "--state-dir DIR", "Ctrl-C stops it."} {
		if !testkit.Poll(ctx, func() bool { return strings.Contains(stderr.String(), next) }) {
			t.Fatalf("no next step %q:\n%s", next, stderr.String())
		}
	}
	if filepath.Dir(dir) != tmp {
		t.Fatalf("state dir %s, want a new directory in TMPDIR %s", dir, tmp)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v, want mode 0700", fi, err)
	}
	tok, err := readFile(filepath.Join(dir, "api-token-"+m[2]))
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	if err := json.Unmarshal(send(t, m[1], tok, "GET", "/api/health", nil).body, &health); err != nil || health["simulated"] != true {
		t.Fatalf("health %v %v: want \"simulated\": true", health, err)
	}
	if files := testkit.FilesUnder(home); len(files) != 0 {
		t.Fatalf("wrote under HOME: %v", files[0].Name)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if p.Err() != nil {
		t.Fatalf("exit: %v\n%s", p.Err(), stderr.String())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("left in TMPDIR after exit: %v", entries)
	}
}

// A directory whose port file names a running backend, and resmon's own state directory, are
// refused, and nothing in them changes.
func TestDevBackendRefusesAnotherBackendsDirectory(t *testing.T) {
	other := startSim(t, Options{})
	taken := other.StateDir()
	pf := filepath.Join(taken, "resmon.port")
	before, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	real := filepath.Join(home, ".local", "state", "resmon")
	for _, c := range []struct{ dir, why string }{{taken, "running backend"}, {real, "resmon's own state directory"}} {
		var b bytes.Buffer
		if code := Main(CommandOptions{Options: Options{StateDir: c.dir}}, &b, os.ReadFile); code != 1 || !strings.Contains(b.String(), c.why) {
			t.Errorf("--state-dir %s: exit %d, %q; want 1 naming the %s", c.dir, code, b.String(), c.why)
		}
	}
	if got, _ := os.ReadFile(pf); string(got) != string(before) {
		t.Errorf("the other backend's port file changed from %q to %q", before, got)
	}
	if _, err := os.Stat(real); !os.IsNotExist(err) {
		t.Errorf("resmon's state directory was created: %v", err)
	}
}
