package main

import (
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// startDemo runs `resmongw demo` with TMPDIR tmp until it is ready, and returns it with its
// printed private directory and the environment of the harness lines it printed. With
// piped, its stdout is a pipe whose read end *reader is (for a test to close).
func startDemo(t *testing.T, tmp string, reader **os.File) (*testkit.Proc, *testkit.SyncBuffer, string, []string) {
	t.Helper()
	ctx := testkit.Context(t, 90*time.Second)
	cmd := exec.Command(bin, "demo")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + tmp, testkit.NoRaceExitSleep}
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if reader != nil {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, *reader = w, r
		go func() { _, _ = io.Copy(&stdout, r) }()
		defer w.Close()
		t.Cleanup(func() { r.Close() })
	}
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(testkit.WaitLimit) })
	if !testkit.Poll(ctx, func() bool { return strings.Contains(stdout.String(), "Press Ctrl-C") }) {
		t.Fatalf("the demo did not get ready\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`everything lives in (\S+)\.\n`).FindStringSubmatch(stdout.String())
	st := regexp.MustCompile(`\n    (RESMONGW_SOCKET=\S+ RESMON_STATE_DIR=\S+ RESMONGW_DEMO=\S+) \S+ status\n`).FindStringSubmatch(stdout.String())
	if m == nil || st == nil {
		t.Fatalf("no directory or status line (with RESMONGW_DEMO) in the demo's output:\n%s", stdout.String())
	}
	return p, &stdout, m[1], strings.Fields(st[1])
}

// Issue 25.6b: the demo cleans up on SIGHUP, SIGTERM and a closed stdout as it does on
// Ctrl-C: its directory (token file included) is removed and nothing is left running.
func TestDemoCleansUpOnEveryEnd(t *testing.T) {
	for _, end := range []string{"SIGHUP", "SIGTERM", "closed stdout"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Context(t, 90*time.Second)
			tmp := testkit.ShortTempDir(t)
			var reader *os.File
			p, stdout, dir, _ := startDemo(t, tmp, &reader)
			switch end {
			case "SIGHUP":
				_ = syscall.Kill(p.Pid(), syscall.SIGHUP)
			case "SIGTERM":
				_ = syscall.Kill(p.Pid(), syscall.SIGTERM)
			default:
				reader.Close() // whoever read the demo's output went away
			}
			select {
			case <-p.Done():
			case <-ctx.Done():
				t.Fatalf("the demo did not end on %s\n%s", end, stdout.String())
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("after %s the demo's directory %s is still there (%v)", end, dir, err)
			}
			if left := processesWithEnv("TMPDIR=" + tmp); len(left) > 0 {
				t.Errorf("after %s, processes left running: %v", end, left)
			}
		})
	}
}

// Issue 25.6b: a harness entry the demo printed, used after the demo ended, starts no daemon,
// does not recreate the demo's directory and does not look healthy: it says the demo has
// ended and how to remove the entry, and so does status with that entry's environment.
func TestEndedDemoEntryStartsNothing(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t, 90*time.Second)
	tmp := testkit.ShortTempDir(t)
	p, _, dir, entryEnv := startDemo(t, tmp, nil)
	_ = syscall.Kill(p.Pid(), syscall.SIGINT)
	select {
	case <-p.Done():
	case <-ctx.Done():
		t.Fatal("the demo did not end on SIGINT")
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + tmp, testkit.NoRaceExitSleep}, entryEnv...)

	shim := exec.CommandContext(ctx, bin, "stdio")
	shim.Env = env
	shim.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}` + "\n" +
		testkit.ToolCall("2", "health", "") + "\n")
	var stderr, stdout testkit.SyncBuffer
	shim.Stderr, shim.Stdout = &stderr, &stdout
	_ = shim.Run()
	// The session stays up (issue 25.4) and says it on stderr and in each call's answer.
	call := stdout.String()
	if i := strings.Index(call, `"id":2,`); i >= 0 {
		call = call[i:]
	} else {
		t.Errorf("the ended demo's entry did not answer the call:\n%s", stdout.String())
	}
	for _, msg := range []string{stderr.String(), call} {
		for _, want := range []string{"demo", "has ended", "claude mcp remove resmon-demo", "codex mcp remove resmon-demo"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the ended demo's entry does not say %q:\n%s", want, msg)
			}
		}
	}

	status := exec.CommandContext(ctx, bin, "status")
	status.Env = env
	out, err := status.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "has ended") ||
		!strings.Contains(string(out), "claude mcp remove resmon-demo") {
		t.Errorf("status with the ended demo's entry: %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the ended demo's directory %s was recreated (%v)", dir, err)
	}
	if left := processesWithEnv("TMPDIR=" + tmp); len(left) > 0 {
		t.Errorf("a process was started for the ended demo: %v", left)
	}
}
