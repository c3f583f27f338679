package daemon_test

import (
	"bytes"
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

// B2: a session whose RESMON_PORT the port parser refuses ("+N", "000N") never shares a
// target with one naming the valid port N, whichever connects first: the bad one is told its
// value is not a port, the good one reaches the backend.
func TestBadAndGoodPortNeverShareATarget(t *testing.T) {
	for _, badFirst := range []bool{true, false} {
		t.Run("badFirst="+strconv.FormatBool(badFirst), func(t *testing.T) {
			w := newWorld(t)
			w.startDaemon()
			sim := startSim(t)
			ctx := testCtx(t)
			good := strconv.Itoa(sim.Port())
			for _, bad := range []string{"+" + good, "000" + good} {
				env := func(port string) []string { return append(simEnv(sim), "RESMON_PORT="+port) }
				checkBad := func() {
					s := w.connect(ctx, "2025-11-25", env(bad)...)
					r := call(ctx, t, s.cs, "health", nil)
					msg, _ := r.payload["message"].(string)
					if !r.isError || !strings.Contains(msg, "not a port") {
						t.Errorf("RESMON_PORT=%q: health = %v, want the not-a-port error", bad, r.payload)
					}
				}
				checkGood := func() {
					s := w.connect(ctx, "2025-11-25", env(good)...)
					if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
						t.Errorf("RESMON_PORT=%s reached %s, want %s", good, got, sim.RuntimeID())
					}
				}
				if badFirst {
					checkBad()
					checkGood()
				} else {
					checkGood()
					checkBad()
				}
			}
		})
	}
}

// B5: SIGHUP (a closed terminal, a supervisor's reload) is a graceful shutdown: exit 0, the
// socket removed, and the buffered log flushed to the file.
func TestSIGHUPShutsDownCleanly(t *testing.T) {
	w := newWorld(t)
	d := w.startDaemon()
	if err := syscall.Kill(d.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not exit after SIGHUP")
	}
	if err := d.Err(); err != nil {
		t.Fatalf("exit after SIGHUP: %v (want 0)\n%s", err, d.stderr)
	}
	if _, err := os.Lstat(w.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind after SIGHUP: %v", err)
	}
	b, err := os.ReadFile(w.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"shutting down"`, `"signal":"hangup"`, `"daemon stopped"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("log lacks %s:\n%s", want, b)
		}
	}
}

// B6: removing the socket under a live daemon does not strand it: the daemon listens again,
// and a shim started meanwhile waits for that (no second daemon) and gets a session.
func TestRemovedSocketIsRecreated(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	pid := w.DaemonPID()
	sim := startSim(t)
	ctx := testCtx(t)
	if err := os.Remove(w.Socket); err != nil {
		t.Fatal(err)
	}
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("reached %s, want %s", got, sim.RuntimeID())
	}
	if got := w.DaemonPID(); got != pid {
		t.Errorf("lock holder changed from %d to %d: a second daemon started", pid, got)
	}
	testkit.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return bytes.Contains(b, []byte("listening again"))
	}, "the re-listen in the daemon log")
}

// B6: with no socket file but a live daemon holding the lock, status and the shim say so
// instead of "not running", and the shim starts no second daemon. The lock here names the
// world's running daemon from another directory, so its socket never comes back.
func TestSocketGoneWhileLockHeld(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	pid := w.DaemonPID()
	socket := filepath.Join(testkit.ShortTempDir(t), "mcp.sock")
	lock := filepath.Join(filepath.Dir(socket), "daemon.lock")
	if err := os.WriteFile(lock, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	out, code := w.runStatus(ctx, nil, "--socket", socket)
	want := "pid " + strconv.Itoa(pid) + " holds the lock but its socket"
	if code != 3 || !strings.Contains(out, want) || strings.Contains(out, "not running") {
		t.Errorf("status: exit %d\n%s\nwant exit 3 and %q", code, out, want)
	}

	cmd := exec.CommandContext(ctx, bin, "stdio", "--socket", socket)
	cmd.Env = w.Env()
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("shim: %v, stderr %q; want exit 1 and %q", err, stderr.String(), want)
	}
	if b, _ := os.ReadFile(lock); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("the lock changed to %q: the shim started a daemon", b)
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("a socket appeared at %s: the shim started a daemon", socket)
	}
}
