package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/toolfacts"
)

// bin is resmongw, built once for the tests that run it as a process.
var bin string

func TestMain(m *testing.M) {
	testkit.RunHelper(oldDaemonHelper, oldDaemon)
	testkit.MainWithBinary(m, &bin, testkit.Race, nil)
}

// `resmongw demo` runs a simulated backend and a daemon, prints real tool calls made through
// the shim and the line for each harness, serves `status` (SIMULATED, exit 0 even with the
// default backend absent), and on Ctrl-C stops everything: nothing left running, nothing
// written outside its private directory, and that directory removed.
func TestDemoRunsAndStopsClean(t *testing.T) {
	ctx := testkit.Context(t, 90*time.Second)
	tmp, home := testkit.ShortTempDir(t), t.TempDir()
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, testkit.NoRaceExitSleep}
	cmd := exec.Command(bin, "demo")
	cmd.Env = base
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(testkit.WaitLimit)
	if !testkit.Poll(ctx, func() bool { return strings.Contains(stdout.String(), "Press Ctrl-C") }) {
		t.Fatalf("the demo did not get ready\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"SIMULATED", fmt.Sprintf("tools/list: %d tools", len(toolfacts.Rows)), "health {}", "search_corpus", "list_routines",
		"claude mcp add resmon-demo -e RESMONGW_SOCKET=", "codex mcp add resmon-demo --env RESMONGW_SOCKET=",
		`"mcpServers"`, " stdio"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`everything lives in (\S+)\.\n`).FindStringSubmatch(out)
	if m == nil || filepath.Dir(m[1]) != tmp {
		t.Fatalf("no private directory under TMPDIR named:\n%s", out)
	}
	dir := m[1]
	socket := filepath.Join(dir, "mcp.sock")

	// The printed status line works; a plain status on the demo's socket exits 0 too (the
	// demo's session uses the demo target; the default resmon, absent here, is not in use).
	for _, env := range [][]string{{"RESMONGW_SOCKET=" + socket, "RESMON_STATE_DIR=" + filepath.Join(dir, "backend")}, {"RESMONGW_SOCKET=" + socket}} {
		st := exec.CommandContext(ctx, bin, "status")
		st.Env = append(append([]string{}, base...), env...)
		sout, err := st.Output()
		if err != nil || !strings.Contains(string(sout), "SIMULATED") {
			t.Errorf("status with %v: %v\n%s", env, err, sout)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		t.Fatalf("the demo did not stop on SIGINT\n%s", stdout.String())
	}
	if p.Err() != nil || !strings.Contains(stdout.String(), "stopped; removed "+dir) {
		t.Fatalf("demo exit: %v\nstdout %s\nstderr %s", p.Err(), stdout.String(), stderr.String())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
	if files := testkit.FilesUnder(home); len(files) != 0 {
		t.Errorf("wrote under HOME: %s", files[0].Name)
	}
	// Every process the demo started inherited this test's own TMPDIR; the binary's path
	// would not tell them apart, since other packages' tests run the same shared binary.
	if left := processesWithEnv("TMPDIR=" + tmp); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// processesWithEnv lists live processes whose environment holds the entry kv.
func processesWithEnv(kv string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), kv) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie waiting for its parent is not running
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}
