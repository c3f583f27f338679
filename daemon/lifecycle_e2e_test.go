package daemon_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/shim"
)

// runCmd runs `resmongw args...` in the world with extra env; it returns stdout, stderr and
// the exit code.
func (w *world) runCmd(ctx context.Context, extraEnv []string, args ...string) (string, string, int) {
	w.T.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = w.Env(extraEnv...)
	var out, errb testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		w.T.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// daemonArgs is the command line of a live process.
func daemonArgs(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Skipf("no /proc to read the daemon's arguments: %v", err)
	}
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// `resmongw stop` stops an autostarted daemon (no service installed) through the daemon
// itself: it answers, ends its sessions, exits, and leaves no socket behind.
func TestStopStopsAnAutostartedDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	pid := w.DaemonPID()
	if pid == 0 {
		t.Fatal("no autostarted daemon")
	}
	if args := daemonArgs(t, pid); !strings.Contains(args, "--exit-when-idle "+shim.DefaultExitWhenIdle.String()) {
		t.Errorf("autostarted daemon's arguments %q lack --exit-when-idle %s", args, shim.DefaultExitWhenIdle)
	}

	out, errOut, code := w.runCmd(ctx, nil, "stop")
	if code != 0 || !strings.Contains(out, "stopped the daemon (pid "+strconv.Itoa(pid)) {
		t.Fatalf("stop: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// stop returns once the daemon has shut down and released its lock; its exit follows.
	if !testkit.WaitGone(pid, 30*time.Second) {
		t.Fatalf("daemon %d still alive after stop returned", pid)
	}
	if _, err := os.Lstat(w.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	// The session ended: the shim exits (the harness sees its server gone).
	done := make(chan error, 1)
	go func() { done <- s.cs.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the shim outlived the stopped daemon; stderr %s", s.stderr)
	}
	// Nothing to stop is not an error.
	if out, _, code := w.runCmd(ctx, nil, "stop"); code != 0 || !strings.Contains(out, "not running") {
		t.Fatalf("second stop: exit %d %s", code, out)
	}
}

// `resmongw restart` of an autostarted daemon brings a new daemon back on the same socket.
func TestRestartBringsAnAutostartedDaemonBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	old := w.DaemonPID()
	if err := s.cs.Close(); err != nil {
		t.Fatal(err)
	}

	// The restart follows the daemon it replaces, not the asker's environment (which here
	// would make a daemon that stays).
	out, errOut, code := w.runCmd(ctx, []string{shim.ExitWhenIdleEnv + "=0"}, "restart")
	if code != 0 || !strings.Contains(out, "started the daemon") || !strings.Contains(out, "exits after 10m0s") {
		t.Fatalf("restart: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !testkit.WaitGone(old, 30*time.Second) {
		t.Fatalf("old daemon %d still alive", old)
	}
	now := w.DaemonPID()
	if now == 0 || now == old || !testkit.Alive(now) {
		t.Fatalf("after restart: daemon pid %d (old %d)", now, old)
	}
	if !strings.Contains(daemonArgs(t, now), "--exit-when-idle 10m0s") {
		t.Errorf("the restarted daemon does not exit after the autostarted one's idle period: %s", daemonArgs(t, now))
	}
	s2 := w.connect(ctx, "", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s2.cs); got != sim.RuntimeID() {
		t.Fatalf("after restart: runtime %s, want %s", got, sim.RuntimeID())
	}
	if w.DaemonPID() != now {
		t.Fatalf("the session started yet another daemon")
	}
}

// `resmongw start` without a service starts a daemon that stays (no idle exit: someone asked
// for it), and a second start finds it running.
func TestStartWithoutServiceStartsADaemonThatStays(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	ctx := testCtx(t)
	out, errOut, code := w.runCmd(ctx, nil, "start")
	pid := w.DaemonPID()
	if code != 0 || pid == 0 || !strings.Contains(out, "started the daemon (pid "+strconv.Itoa(pid)) {
		t.Fatalf("start: exit %d, pid %d\n%s%s", code, pid, out, errOut)
	}
	if args := daemonArgs(t, pid); strings.Contains(args, "--exit-when-idle") {
		t.Errorf("a daemon started on purpose exits when idle: %s", args)
	}
	if out, _, code := w.runCmd(ctx, nil, "start"); code != 0 || !strings.Contains(out, "already running (pid "+strconv.Itoa(pid)) {
		t.Fatalf("second start: exit %d\n%s", code, out)
	}
}

// Issue 25.6d: `resmongw restart` of a daemon that `start` began brings back one that stays,
// and says nothing of an idle exit.
func TestRestartKeepsAStartedDaemonResident(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	ctx := testCtx(t)
	if out, errOut, code := w.runCmd(ctx, nil, "start"); code != 0 {
		t.Fatalf("start: exit %d\n%s%s", code, out, errOut)
	}
	old := w.DaemonPID()
	out, errOut, code := w.runCmd(ctx, nil, "restart")
	if code != 0 || !strings.Contains(out, "started the daemon") || strings.Contains(out, "exits after") {
		t.Fatalf("restart: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !testkit.WaitGone(old, 30*time.Second) {
		t.Fatalf("old daemon %d still alive", old)
	}
	now := w.DaemonPID()
	if now == 0 || now == old {
		t.Fatalf("after restart: daemon pid %d (old %d)", now, old)
	}
	if args := daemonArgs(t, now); strings.Contains(args, "--exit-when-idle") {
		t.Errorf("a started daemon came back as one that exits when idle: %s", args)
	}
}

// An autostarted daemon exits on its own once it has had no session for the idle period;
// the log says why.
func TestAutostartedDaemonExitsWhenIdle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	ctx := testCtx(t)
	// The period starts when the daemon starts (before the shim's session); 3s leaves the
	// shim, which dials at once, ample time on a loaded machine. The exit is waited for, not
	// timed.
	idle := []string{shim.ExitWhenIdleEnv + "=3s"}
	s := w.connect(ctx, "", append(simEnv(sim), idle...)...)
	healthRuntimeID(ctx, t, s.cs)
	pid := w.DaemonPID()
	if !strings.Contains(daemonArgs(t, pid), "--exit-when-idle 3s") {
		t.Fatalf("daemon args %q", daemonArgs(t, pid))
	}
	if err := s.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitGone(pid, 30*time.Second) {
		t.Fatalf("the idle daemon %d did not exit", pid)
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Contains(string(b), "no session for the idle period")
	}, "the idle exit in the log")
	if _, err := os.Lstat(w.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// Two harnesses of one user, one without XDG_RUNTIME_DIR (as Codex starts servers) and with
// another HOME, reach the same daemon: the default socket follows the uid, not the
// environment. status names a second daemon of the user if one runs elsewhere.
func TestTwoHarnessEnvironmentsReachOneDaemon(t *testing.T) {
	t.Parallel()
	// The user's processes see a private /run/user, so the uid's default socket is this test's.
	ru := testkit.NewRunUser(t, testkit.ShortTempDir(t))
	sim := startSim(t)
	ctx := testCtx(t)
	socket := ru.Socket()
	t.Cleanup(func() {
		if pid, _ := testkit.ReadPIDFile(paths.LockFile(socket)); pid > 0 {
			_ = testkit.StopPID(pid, testkit.WaitLimit)
		}
	})
	homeA, homeB := t.TempDir(), t.TempDir()
	envOf := func(extra ...string) []string {
		return append([]string{"PATH=" + os.Getenv("PATH"), "RESMON_STATE_DIR=" + sim.StateDir(), testkit.NoRaceExitSleep}, extra...)
	}
	harness := func(env []string) *shimSession {
		cmd := ru.Wrap(exec.Command(bin, "stdio"))
		cmd.Env = env
		return connectCmd(ctx, t, cmd)
	}
	a := harness(envOf("HOME="+homeA, "XDG_RUNTIME_DIR="+t.TempDir(), "XDG_STATE_HOME="+filepath.Join(homeA, "state")))
	healthRuntimeID(ctx, t, a.cs)
	pid, _ := testkit.ReadPIDFile(paths.LockFile(socket))
	if pid == 0 {
		t.Fatalf("no daemon at the uid's default socket %s", socket)
	}
	b := harness(envOf("HOME=" + homeB))
	healthRuntimeID(ctx, t, b.cs)
	if again, _ := testkit.ReadPIDFile(paths.LockFile(socket)); again != pid {
		t.Fatalf("second environment: daemon %d, first %d", again, pid)
	}

	// A second daemon where an older version (or an explicit socket) put one: status says so.
	stray := filepath.Join(homeB, ".local", "state", "resmongw", "run", "mcp.sock")
	cmd := exec.Command(bin, "serve", "--socket", stray, "--log-file", filepath.Join(homeB, "stray.log"))
	cmd.Env = envOf("HOME=" + homeB)
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(testkit.WaitLimit) })
	if err := testkit.WaitListening(stray, testkit.WaitLimit, p); err != nil {
		t.Fatal(err)
	}
	st := ru.Wrap(exec.CommandContext(ctx, bin, "status"))
	st.Env = envOf("HOME=" + homeB)
	out, err := st.Output()
	if err != nil || !strings.Contains(string(out), "another resmongw daemon of this user runs: pid "+strconv.Itoa(p.Pid())) ||
		!strings.Contains(string(out), "socket /run/user/"+strconv.Itoa(os.Getuid())+"/resmongw/mcp.sock\n") { // logind's, as the daemon sees it
		t.Fatalf("status with a stray daemon: %v\n%s", err, out)
	}
}

// connectCmd is world.connect for a command with its own environment.
func connectCmd(ctx context.Context, t *testing.T, cmd *exec.Cmd) *shimSession {
	t.Helper()
	s := &shimSession{cmd: cmd, stderr: &testkit.SyncBuffer{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	s.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return s
}

// Another user who can reach the socket cannot stop the daemon: their resmongw refuses a
// socket that is not theirs before writing a byte, and a client that skips that check is
// refused by the daemon's own peer check without a word, and logged.
func TestStopFromAnotherUserIsRefused(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a command as another user")
	}
	w := newWorld(t)
	d := w.startDaemon()
	// Open the directories and the socket so the kernel lets `nobody` connect: the peer check
	// is then the only thing in the way.
	dir := filepath.Dir(w.Socket)
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(w.Socket, 0o666); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "stop", "--socket", w.Socket)
	cmd.Env = append(w.Env(), "HOME=/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "nothing was sent") {
		t.Fatalf("stop as nobody: %v\n%s", err, out)
	}
	if got := rawClientAsNobody(ctx, t, sessionwire.KindStop, w.Socket); got != "received 0 bytes" {
		t.Fatalf("a stop request as nobody, past the client's checks: %q, want no answer", got)
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Contains(string(b), "refused a connection from another user") && strings.Contains(string(b), `"uid":65534`)
	}, "the refusal in the daemon log")
	if _, code := w.runStatus(ctx, nil); code == 3 {
		t.Fatal("the daemon stopped for another user")
	}
	select {
	case <-d.Done():
		t.Fatalf("the daemon exited: %v", d.Err())
	default:
	}
}
