//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.5: the demo's daemon runs in the demo's own process, which had none of the real
// daemon's hardening (its memory readable by the user's other processes, core dumps on). The
// demo runs as nobody here so the kernel's verdict is visible: /proc/<pid>/status of a
// non-dumpable process belongs to root, of a dumpable one to its user; /proc/<pid>/limits
// shows the core limit.
func TestDemoProcessNotDumpableNoCore(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t, 90*time.Second)
	dir := testkit.OtherUserDir(t)
	cmd := exec.Command(bin, "demo")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, testkit.NoRaceExitSleep}
	testkit.AsOtherUser(cmd)
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(p.Pid(), syscall.SIGINT)
		p.Stop(testkit.WaitLimit)
	}()
	if !testkit.Poll(ctx, func() bool { return strings.Contains(stdout.String(), "Press Ctrl-C") }) {
		t.Fatalf("the demo (as nobody) did not get ready\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	testkit.RequireHardened(t, p.Pid(), "the demo, which holds the daemon and a token,")
}
