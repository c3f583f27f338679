package daemon_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// The first shim finds no daemon, starts one detached, and is served by it; the daemon
// outlives the session, and later shims reuse it.
func TestAutostartServesSession(t *testing.T) {
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	ctx := testCtx(t)

	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	pid := w.DaemonPID()
	if pid == 0 || !testkit.Alive(pid) {
		t.Fatalf("no daemon after autostart (lock pid %d)", pid)
	}
	tools, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 25 {
		t.Fatalf("tools/list: %d tools, want 25", len(tools.Tools))
	}
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("health runtime id %s, want the simulator's %s", got, sim.RuntimeID())
	}
	if err := s.cs.Close(); err != nil {
		t.Fatalf("closing the session: %v (shim stderr %q)", err, s.stderr)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("shim exit code %d after stdin closed", code)
	}

	// A second harness (default protocol this time) reuses the same daemon.
	s2 := w.connect(ctx, "", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s2.cs); got != sim.RuntimeID() {
		t.Fatalf("second session: runtime id %s, want %s", got, sim.RuntimeID())
	}
	if again := w.DaemonPID(); again != pid {
		t.Fatalf("second session started another daemon: pid %d, first %d", again, pid)
	}
}

// With autostart disabled and no daemon, the shim says so on stderr and exits non-zero.
func TestNoAutostart(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.Env("RESMONGW_NO_AUTOSTART=1")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("shim without daemon: err %v, want a non-zero exit", err)
	}
	if stdout.String() != "" {
		t.Fatalf("shim wrote to stdout: %q", stdout.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "not running") || strings.Count(msg, "\n") != 1 {
		t.Fatalf("stderr %q: want one line saying the daemon is not running", msg)
	}
	if w.DaemonPID() != 0 {
		t.Fatal("a daemon was started although autostart is off")
	}
}

// Two harnesses pointing at two resmon instances each reach their own backend through one
// daemon.
func TestTwoTargets(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	simA, simB := startSim(t), startSim(t)
	ctx := testCtx(t)
	a := w.connect(ctx, "2025-11-25", simEnv(simA)...)
	b := w.connect(ctx, "2025-11-25", simEnv(simB)...)
	for i := 0; i < 3; i++ {
		if got := healthRuntimeID(ctx, t, a.cs); got != simA.RuntimeID() {
			t.Fatalf("session A reached %s, want %s (B is %s)", got, simA.RuntimeID(), simB.RuntimeID())
		}
		if got := healthRuntimeID(ctx, t, b.cs); got != simB.RuntimeID() {
			t.Fatalf("session B reached %s, want %s (A is %s)", got, simB.RuntimeID(), simA.RuntimeID())
		}
	}
	out, code := w.runStatus(ctx, simEnv(simA), "--json")
	if code != 0 {
		t.Fatalf("status exit %d with both backends up:\n%s", code, out)
	}
	st := decodeStatus(t, out)
	if len(st.Targets) != 2 || len(st.Sessions) != 2 {
		t.Fatalf("status: %d targets, %d sessions; want 2 and 2", len(st.Targets), len(st.Sessions))
	}
	var rids []string
	for _, tg := range st.Targets {
		if tg.Sessions != 1 || tg.State.Backend == nil {
			t.Fatalf("target %s: %d sessions, backend %v", tg.Key, tg.Sessions, tg.State.Backend)
		}
		rids = append(rids, tg.State.Backend.RuntimeID())
	}
	if !slices.Contains(rids, simA.RuntimeID()) || !slices.Contains(rids, simB.RuntimeID()) {
		t.Fatalf("status runtime ids %v, want both %s and %s", rids, simA.RuntimeID(), simB.RuntimeID())
	}
	if !st.Targets[0].Caller || st.Targets[0].State.Backend.RuntimeID() != simA.RuntimeID() {
		t.Fatalf("the caller's target should come first and be A's")
	}
}

// The backend restarts (same port, then a new port) under an open session: the next call
// succeeds on the new instance without the harness reconnecting.
func TestBackendRestartMidSession(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	first := healthRuntimeID(ctx, t, s.cs)
	for _, newPort := range []bool{false, true} {
		oldPort := sim.Port()
		if err := sim.Restart(resmonsim.RestartOptions{NewPort: newPort}); err != nil {
			t.Fatal(err)
		}
		if newPort == (sim.Port() == oldPort) {
			t.Fatalf("restart NewPort=%v: port %d -> %d", newPort, oldPort, sim.Port())
		}
		r := call(ctx, t, s.cs, "health", nil)
		if r.isError {
			t.Fatalf("first call after restart (new port %v) failed: %v", newPort, r.payload)
		}
		if rid := r.payload["identity"].(map[string]any)["runtime_id"]; rid != sim.RuntimeID() || rid == first {
			t.Fatalf("after restart: runtime id %v, want the new %s", rid, sim.RuntimeID())
		}
	}
}

// With the backend stopped, tools fail with backend_unavailable while initialize and
// tools/list keep working; a new session can still start.
func TestBackendStopped(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	if err := sim.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, sess := range []*shimSession{s, w.connect(ctx, "2025-11-25", simEnv(sim)...)} {
		tools, err := sess.cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 25 {
			t.Fatalf("tools/list with the backend down: %v, %v", err, tools)
		}
		for _, tool := range []string{"health", "search_corpus"} {
			r := call(ctx, t, sess.cs, tool, map[string]any{"query": "x"})
			if !r.isError || r.payload["error"] != "backend_unavailable" {
				t.Fatalf("%s with the backend down: %v", tool, r.payload)
			}
		}
	}
}

// The daemon is killed: open sessions end (the shim exits), the socket is left behind, and
// the next shim autostarts a new daemon that replaces the stale socket.
func TestDaemonKilledNextShimAutostarts(t *testing.T) {
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	old := w.DaemonPID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitGone(old, 10*time.Second) {
		t.Fatal("killed daemon still alive")
	}
	if _, err := os.Lstat(w.Socket); err != nil {
		t.Fatalf("a SIGKILLed daemon should leave its socket behind: %v", err)
	}
	// The old session's shim notices the closed stream, says so and exits 1.
	_ = s.cs.Wait()
	shimDone := make(chan struct{})
	go func() { _ = s.cs.Close(); close(shimDone) }()
	select {
	case <-shimDone:
	case <-time.After(15 * time.Second):
		t.Fatal("old shim did not exit after the daemon died")
	}
	if st := s.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 1 || s.stderr.String() != shimDaemonEnded {
		t.Fatalf("old shim: state %v, stderr %q; want exit 1 and %q", st, s.stderr, shimDaemonEnded)
	}

	s2 := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s2.cs); got != sim.RuntimeID() {
		t.Fatalf("after daemon restart: runtime id %s", got)
	}
	if now := w.DaemonPID(); now == 0 || now == old {
		t.Fatalf("no new daemon: pid %d (old %d)", now, old)
	}
}

// A second daemon refuses to start while one is live (and leaves its socket alone); a stale
// socket from a crashed daemon is replaced.
func TestSingleInstanceAndStaleSocket(t *testing.T) {
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

// SIGTERM with a session open: the daemon closes it and exits 0; the shim, whose harness
// still had it open, says the daemon ended the session and exits 1 (the server is gone).
func TestGracefulShutdownClosesSessions(t *testing.T) {
	w := newWorld(t)
	d := w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	if err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.cs.Wait() }()
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		t.Fatal("session still open after the daemon stopped")
	}
	_ = s.cs.Close()
	if code := s.cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("shim exit %d after the daemon closed the stream, want 1; stderr %q", code, s.stderr)
	}
	if got := s.stderr.String(); got != shimDaemonEnded {
		t.Fatalf("shim stderr %q, want %q", got, shimDaemonEnded)
	}
}

// shimDaemonEnded is the shim's whole stderr when the daemon ends a session under it.
const shimDaemonEnded = "resmongw stdio: the daemon ended this session (it stopped or restarted); restart this MCP server to reconnect\n"

// The harness speaks raw JSON-RPC; everything on the shim's stdout must be JSON-RPC, and
// closing stdin ends the shim with exit 0.
func TestShimStdoutIsOnlyJSONRPC(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env(simEnv(sim)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 16<<20)
	var seen []string
	next := func() map[string]any {
		if !lines.Scan() {
			t.Fatalf("stdout ended early (%v); stderr %q", lines.Err(), stderr.String())
		}
		seen = append(seen, lines.Text())
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame on stdout: %q", lines.Text())
		}
		return m
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(testkit.InitializeRequest(`1`, "2025-06-18", "raw"))
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(testkit.InitializedNotification)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := next(); m["id"] != float64(2) {
		t.Fatalf("tools/list: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{}}}`)
	if m := next(); m["id"] != float64(3) {
		t.Fatalf("tools/call: %v", m)
	}
	stdin.Close()
	for lines.Scan() {
		seen = append(seen, lines.Text())
		var m map[string]any
		if json.Unmarshal(lines.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame on stdout: %q", lines.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("shim after stdin EOF: %v; stderr %q", err, stderr.String())
	}
	if len(seen) < 3 {
		t.Fatalf("saw %d frames", len(seen))
	}
	if stderr.String() != "" {
		t.Fatalf("shim wrote to stderr in normal operation: %q", stderr.String())
	}
}

// A process of another user that reaches the socket is refused and logged.
func TestOtherUIDRefused(t *testing.T) {
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
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = append(w.Env("RESMONGW_NO_AUTOSTART=1"), "HOME=/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stdin = strings.NewReader(testkit.InitializeRequest(`1`, "2025-06-18", "x") + "\n")
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("shim as nobody: %v (stderr %q), want refused", err, stderr.String())
	}
	if stdout.String() != "" {
		t.Fatalf("another user got an answer: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "closed the connection") {
		t.Fatalf("shim as nobody: stderr %q", stderr.String())
	}
	testkit.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Contains(string(b), "refused a connection from another user") && strings.Contains(string(b), `"uid":65534`)
	}, "the refusal in the daemon log")
}

// The log file is private and never holds the token, even after restarts and failures.
func TestLogFilePrivateAndTokenFree(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	tokens := []string{sim.Token()}
	healthRuntimeID(ctx, t, s.cs)
	call(ctx, t, s.cs, "search_corpus", map[string]any{"query": "graph"})
	if err := sim.Restart(resmonsim.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	tokens = append(tokens, sim.Token())
	healthRuntimeID(ctx, t, s.cs)
	_ = sim.Stop()
	call(ctx, t, s.cs, "health", nil)
	out, _ := w.runStatus(ctx, simEnv(sim), "--json")

	testkit.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Count(string(b), `"msg":"tool call"`) >= 4
	}, "four tool calls in the log")
	fi, err := os.Stat(w.LogFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log file mode %v (%v), want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(w.LogFile())
	leaks, err := testkit.TokenLeaks(tokens, testkit.Text{Name: "the log file", Body: string(b)}, testkit.Text{Name: "status output", Body: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaks) > 0 {
		t.Fatalf("%s contains a backend token", strings.Join(leaks, " and "))
	}
	if strings.Contains(string(b), `"graph"`) {
		t.Fatal("the log holds a tool argument value")
	}
}

// A harness that writes its requests and closes stdin at once (a pipe) still gets every
// answer: the shim half-closes, the daemon drains, then the shim exits 0.
func TestPipedRequestsAnsweredAfterStdinEOF(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env(simEnv(sim)...)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		testkit.InitializeRequest(`1`, "2025-06-18", "pipe"),
		testkit.InitializedNotification,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{}}}`,
	}, "\n") + "\n")
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shim: %v; stderr %q", err, stderr.String())
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame: %q", line)
		}
		if id, ok := m["id"].(float64); ok && m["result"] != nil {
			ids[id] = true
		}
	}
	if !ids[1] || !ids[2] || !ids[3] {
		t.Fatalf("answered ids %v, want 1, 2 and 3; stdout:\n%s", ids, out)
	}
	if !strings.Contains(string(out), sim.RuntimeID()) {
		t.Fatalf("the health answer lacks the backend's runtime id")
	}
}

// The harness dies without closing the shim's stdin: the shim notices its parent changed
// and exits instead of lingering as an orphan.
func TestShimExitsWhenParentDies(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	ctx := testCtx(t)
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close() // held open: stdin never reaches EOF
	// sh stands in for the harness; the shim's stdin is our pipe (fd 3), not /dev/null.
	harness := exec.CommandContext(ctx, "sh", "-c", bin+" stdio <&3 >/dev/null & echo $!; exec sleep 60")
	harness.Env = w.Env()
	harness.ExtraFiles = []*os.File{r}
	stdout, _ := harness.StdoutPipe()
	if err := harness.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	shimPID := atoiT(t, strings.TrimSpace(line))
	testkit.WaitFor(t, 10*time.Second, func() bool { return sessionsOpen(t, w) == 1 }, "the shim's session")
	_ = harness.Process.Kill()
	_ = harness.Wait()
	if !testkit.WaitGone(shimPID, 15*time.Second) {
		t.Fatalf("shim %d still running after its parent died", shimPID)
	}
	testkit.WaitFor(t, 10*time.Second, func() bool { return sessionsOpen(t, w) == 0 }, "the session to close")
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func sessionsOpen(t *testing.T, w *world) int {
	out, _ := w.runStatus(testCtx(t), nil, "--json")
	return len(decodeStatus(t, out).Sessions)
}

// The harness closes its end of the shim's stdout while still holding stdin: the answer
// cannot be delivered, nobody is left to tell, and the shim exits 0 without a word (not
// killed by SIGPIPE).
func TestShimExitsQuietlyWhenHarnessClosesStdout(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	outR.Close() // the harness stops reading: the shim's next write fails
	if _, err := io.WriteString(stdin, testkit.InitializeRequest(`1`, "2025-06-18", "x")+"\n"); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err != nil || stderr.String() != "" {
		t.Fatalf("shim with its stdout closed: %v, stderr %q; want exit 0 and silence", err, stderr.String())
	}
}
