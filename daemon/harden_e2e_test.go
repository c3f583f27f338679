//go:build linux

package daemon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
		if p.Stop(15 * time.Second) {
			t.Errorf("daemon ignored SIGTERM")
		}
	})
	if err := testkit.WaitListening(socket, 20*time.Second, p); err != nil {
		t.Fatalf("daemon as nobody: %v\n%s", err, stderr.String())
	}
	proc := "/proc/" + strconv.Itoa(p.Pid())
	var st syscall.Stat_t
	if err := syscall.Stat(proc+"/status", &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 {
		t.Fatalf("%s/status belongs to uid %d: the daemon is dumpable (want it root's, as for PR_SET_DUMPABLE 0)", proc, st.Uid)
	}
	limits, err := os.ReadFile(proc + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(line, "Max core file size") {
			if f := strings.Fields(line); len(f) < 6 || f[4] != "0" || f[5] != "0" {
				t.Fatalf("core limit: %q, want 0 0", line)
			}
			return
		}
	}
	t.Fatalf("no core limit in %s/limits", proc)
}
