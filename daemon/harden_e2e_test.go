//go:build linux

package daemon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 10.6: the daemon is not dumpable and writes no core. It runs as nobody here so the
// kernel's verdict is visible: /proc/<pid>/status of a non-dumpable process belongs to root,
// of a dumpable one to its user; /proc/<pid>/limits shows the core limit.
func TestDaemonNotDumpableNoCore(t *testing.T) {
	t.Parallel()
	dir := testkit.OtherUserDir(t)
	socket := filepath.Join(dir, "run", "mcp.sock")
	cmd := exec.Command(bin, "serve", "--socket", socket)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"), testkit.NoRaceExitSleep}
	testkit.AsOtherUser(cmd)
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.Stop(testkit.WaitLimit) {
			t.Errorf("daemon ignored SIGTERM")
		}
	})
	if err := testkit.WaitListening(socket, 20*time.Second, p); err != nil {
		t.Fatalf("daemon as nobody: %v\n%s", err, stderr.String())
	}
	testkit.RequireHardened(t, p.Pid(), "the daemon")
}
