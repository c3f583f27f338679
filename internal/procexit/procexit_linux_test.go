package procexit

import (
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resmongw/resmongw/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testkit.Exit))
}

// The pidfd watch reports a process's end when it comes, not before; a parent already gone
// when the watch starts is reported at once; stop ends the watch.
func TestWatchExitReportsTheEndOfAProcess(t *testing.T) {
	cmd := startSleeper(t)
	gone, stop := Watch(cmd.Process.Pid, func() bool { return true })
	defer stop()
	if gone == nil {
		t.Skip("no pidfd_open here (Linux before 5.3 or a sandbox): the caller polls")
	}
	select {
	case <-gone:
		t.Fatal("reported gone while it runs")
	default:
	}
	_ = cmd.Process.Kill()
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the end of the process was not reported")
	}
}

func TestWatchExitOfAParentAlreadyGone(t *testing.T) {
	cmd := startSleeper(t)
	gone, stop := Watch(cmd.Process.Pid, func() bool { return false })
	defer stop()
	if gone == nil {
		t.Skip("no pidfd_open here")
	}
	select {
	case <-gone:
	default:
		t.Fatal("a parent that is no longer ours was not reported at once")
	}
}

func TestWatchExitStopEndsTheWatch(t *testing.T) {
	cmd := startSleeper(t)
	gone, stop := Watch(cmd.Process.Pid, func() bool { return true })
	if gone == nil {
		t.Skip("no pidfd_open here")
	}
	stop()
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch goroutine did not end after stop")
	}
}

// startSleeper is a process of ours to watch, killed and reaped when the test ends.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "120")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}
