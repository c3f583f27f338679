package daemon_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
)

// B6: removing the socket under a live daemon does not strand it: the daemon listens again,
// and a shim started meanwhile waits for that (no second daemon) and gets a session.
func TestRemovedSocketIsRecreated(t *testing.T) {
	t.Parallel()
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
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return bytes.Contains(b, []byte("listening again"))
	}, "the re-listen in the daemon log")
}

// B6: with no socket file but a live daemon holding the lock, status and the shim say so
// instead of "not running", and the shim starts no second daemon (it serves the session
// itself meanwhile, issue 25.4; here the harness hangs up at once). The lock here names the
// world's running daemon from another directory, so its socket never comes back.
func TestSocketGoneWhileLockHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	pid := w.DaemonPID()
	socket := filepath.Join(testkit.ShortTempDir(t), "mcp.sock")
	lock := paths.LockFile(socket)
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
	if err != nil || !strings.Contains(stderr.String(), want) {
		t.Errorf("shim: %v, stderr %q; want exit 0 (the harness hung up) and %q", err, stderr.String(), want)
	}
	if b, _ := os.ReadFile(lock); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("the lock changed to %q: the shim started a daemon", b)
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("a socket appeared at %s: the shim started a daemon", socket)
	}
}

// A second daemon refuses to start while one is live (and leaves its socket alone); a stale
// socket from a crashed daemon is replaced.
func TestSingleInstanceAndStaleSocket(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Stale: a socket file nobody listens on.
	if err := os.MkdirAll(filepath.Dir(w.Socket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: w.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := net.Dial("unix", w.Socket); err == nil {
		t.Fatal("stale socket accepted a connection")
	}
	first := w.startDaemon() // fails the test unless it replaced the stale socket

	ctx := testCtx(t)
	second := exec.CommandContext(ctx, bin, "serve", "--socket", w.Socket)
	second.Env = w.Env()
	var stderr testkit.SyncBuffer
	second.Stderr = &stderr
	err = second.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("second daemon: %v, want a non-zero exit", err)
	}
	want := "already running (pid " + itoa(first.Pid())
	if !strings.Contains(stderr.String(), want) {
		t.Fatalf("second daemon said %q, want %q", stderr.String(), want)
	}
	c, err := net.Dial("unix", w.Socket)
	if err != nil {
		t.Fatalf("the live daemon's socket is gone after a second daemon tried: %v", err)
	}
	c.Close()

	// The socket is private: 0600 in a 0700 directory.
	fi, err := os.Stat(w.Socket)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v (%v), want 0600", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(w.Socket))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir mode %v (%v), want 0700", di.Mode(), err)
	}

	// SIGTERM: clean exit 0, socket removed.
	if err := first.stop(t); err != nil {
		t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, first.stderr)
	}
	if _, err := os.Lstat(w.Socket); !os.IsNotExist(err) {
		t.Fatalf("socket still there after shutdown: %v", err)
	}
}

// A process of another user that reaches the socket is refused and logged.
func TestOtherUIDRefused(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	w := newWorld(t)
	w.startDaemon()
	// Open the directory and socket up so the kernel lets `nobody` connect: the peer check
	// is then the only thing in the way.
	dir := filepath.Dir(w.Socket)
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w.Socket, 0o666); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	asNobody := func(args ...string) (code int, stdout, stderr string) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(w.Env("RESMONGW_NO_AUTOSTART=1"), "HOME=/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Stdin = strings.NewReader(testkit.InitializeRequest(`1`, "2025-06-18", "x") + "\n")
		var out, errb testkit.SyncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), out.String(), errb.String()
		} else if err != nil {
			t.Fatalf("%v as nobody: %v (stderr %q)", args, err, errb.String())
		}
		return 0, out.String(), errb.String()
	}
	// The shim itself does not even connect: the directory is not nobody's (sessionwire/trust_unix.go).
	// It answers the session itself instead (issue 25.4): initialize, from the tool table.
	if code, out, errb := asNobody("stdio"); code != 0 || !strings.HasPrefix(out, `{"jsonrpc":"2.0","id":1,"result":`) ||
		strings.Count(out, "\n") != 1 || !strings.Contains(errb, "belongs to uid 0") {
		t.Fatalf("shim as nobody: exit %d, stdout %q, stderr %q; want it to refuse the socket and answer initialize itself", code, out, errb)
	}
	// Nor does status (sessionwire.Dial, like every client of ours).
	if code, out, errb := asNobody("status", "--json"); code != 1 || out != "" || !strings.Contains(errb, "nothing was sent") {
		t.Fatalf("status as nobody: exit %d, stdout %q, stderr %q; want it to refuse the socket", code, out, errb)
	}
	// A client that skips those checks and writes a status preamble gets nothing back.
	if got := rawClientAsNobody(ctx, t, sessionwire.KindStatus, w.Socket); got != "received 0 bytes" {
		t.Fatalf("a status request as nobody, past the client's checks: %q, want no answer", got)
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Contains(string(b), "refused a connection from another user") && strings.Contains(string(b), `"uid":65534`)
	}, "the refusal in the daemon log")
}
