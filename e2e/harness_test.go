package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/resmongw/resmongw/proxy"
	"github.com/resmongw/resmongw/proxy/backendsim"
)

// bin is the resmongw binary under test, built once; its directory is world-readable so a
// helper running as another user can execute it.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rgwe2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "resmongw")
	build := exec.Command("go", "build", "-o", bin, "../cmd/resmongw")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building resmongw:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		// Every in-process goroutine (simulators, SDK clients, upstreams) must be gone.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is one user's environment for one test: home, state home, a short socket path, and
// everything the test's processes printed, to be searched for tokens at the end.
type world struct {
	t         *testing.T
	home      string
	stateHome string
	socket    string

	mu       sync.Mutex
	outputs  []*syncBuffer // every stdout/stderr of every process, every status output, every tool result
	tokens   []string      // every token a simulator minted or we planted
	sims     []*backendsim.Sim
	daemons  []int // pids of daemons seen (started by us or autostarted)
	children []*exec.Cmd
}

func newWorld(t *testing.T) *world {
	t.Helper()
	home := t.TempDir()
	short, err := os.MkdirTemp("", "rg") // sun_path is short; t.TempDir paths are long
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, home: home, stateHome: filepath.Join(home, "state"), socket: filepath.Join(short, "run", "mcp.sock")}
	// Registered first, so it runs last: after every process and simulator is stopped.
	t.Cleanup(func() {
		w.assertNoLeaks()
		w.assertTokenFree()
		w.assertGuardRespected()
		os.RemoveAll(short)
	})
	// Stop whatever daemon holds the lock (autostarted daemons are not our children).
	t.Cleanup(w.stopDaemon)
	return w
}

func (w *world) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.home,
		"XDG_STATE_HOME=" + w.stateHome,
		"RESMONGW_SOCKET=" + w.socket,
	}, extra...)
}

func (w *world) logFile() string  { return filepath.Join(w.stateHome, "resmongw", "resmongw.log") }
func (w *world) lockFile() string { return filepath.Join(filepath.Dir(w.socket), "daemon.lock") }

func (w *world) output() *syncBuffer {
	b := &syncBuffer{}
	w.mu.Lock()
	w.outputs = append(w.outputs, b)
	w.mu.Unlock()
	return b
}

func (w *world) addToken(tok string) {
	if len(tok) < 16 {
		w.t.Fatalf("implausible token of %d bytes", len(tok))
	}
	w.mu.Lock()
	w.tokens = append(w.tokens, tok)
	w.mu.Unlock()
}

// daemonPID is the pid the running daemon wrote into its lock file (0 when none).
func (w *world) daemonPID() int {
	b, err := os.ReadFile(w.lockFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 {
		w.mu.Lock()
		if len(w.daemons) == 0 || w.daemons[len(w.daemons)-1] != pid {
			w.daemons = append(w.daemons, pid)
		}
		w.mu.Unlock()
	}
	return pid
}

func (w *world) stopDaemon() {
	if pid := w.daemonPID(); pid > 0 && alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(pid, 15*time.Second) {
			w.t.Errorf("daemon %d ignored SIGTERM", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			waitGone(pid, 5*time.Second)
		}
	}
}

// startDaemon runs `resmongw serve` as our child and waits until it listens.
func (w *world) startDaemon() *exec.Cmd {
	w.t.Helper()
	cmd := exec.Command(bin, "serve", "--socket", w.socket)
	cmd.Env = w.env()
	cmd.Stdout, cmd.Stderr = w.output(), w.output()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.track(cmd)
	w.waitListening(10 * time.Second)
	w.daemonPID()
	return cmd
}

// track remembers a child so the leak check can insist it was reaped.
func (w *world) track(cmd *exec.Cmd) {
	w.mu.Lock()
	w.children = append(w.children, cmd)
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	w.t.Cleanup(func() {
		select {
		case <-done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			w.t.Errorf("%v ignored SIGTERM", cmd.Args)
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

func (w *world) waitListening(limit time.Duration) {
	w.t.Helper()
	waitFor(w.t, limit, func() bool {
		c, err := net.Dial("unix", w.socket)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "the daemon to listen")
}

// startSim starts an in-process simulated backend in its own state directory.
func (w *world) startSim(opts backendsim.Options) *backendsim.Sim {
	w.t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(w.t.TempDir(), "resmon")
	}
	s, err := backendsim.Start(opts)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = s.Stop() })
	w.mu.Lock()
	w.sims = append(w.sims, s)
	w.mu.Unlock()
	w.addToken(s.Token())
	return s
}

// restartSim restarts a simulator and records its new token.
func (w *world) restartSim(s *backendsim.Sim, o backendsim.RestartOptions) {
	w.t.Helper()
	if err := s.Restart(o); err != nil {
		w.t.Fatal(err)
	}
	w.addToken(s.Token())
}

func simEnv(s *backendsim.Sim) []string { return []string{"RESMON_STATE_DIR=" + s.StateDir()} }

// session is a harness: a go-sdk client that launched `resmongw stdio`.
type session struct {
	w      *world
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
}

func (w *world) connect(ctx context.Context, extraEnv ...string) *session {
	w.t.Helper()
	s, err := w.tryConnect(ctx, extraEnv...)
	if err != nil {
		w.t.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	return s
}

func (w *world) tryConnect(ctx context.Context, extraEnv ...string) (*session, error) {
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.env(extraEnv...)
	s := &session{w: w, cmd: cmd, stderr: w.output()}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return s, err
	}
	s.cs = cs
	w.t.Cleanup(func() { _ = cs.Close() })
	return s, nil
}

// result is a decoded tools/call result: the reference's single text content.
type result struct {
	isError bool
	payload map[string]any
	err     error // a protocol or transport failure (no result at all)
}

func (r result) code() string {
	if r.err != nil {
		return "transport"
	}
	if !r.isError {
		return ""
	}
	c, _ := r.payload["error"].(string)
	return c
}

// documented is the contract's error model; every error result must carry one of these.
var documented = map[string]bool{
	proxy.CodeBackendUnavailable: true, proxy.CodeNotFound: true, proxy.CodeInvalidArgument: true,
	proxy.CodeConflict: true, proxy.CodeUpstreamError: true, proxy.CodeInternalError: true,
	proxy.CodeIdentityUnavailable: true, proxy.CodeInstanceMismatch: true,
}

// call makes one tool call and checks the shape every answer must have: one text item with
// a JSON object; an error has a documented code and a message.
func (s *session) call(ctx context.Context, name string, args map[string]any) result {
	s.w.t.Helper()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return result{err: err}
	}
	if len(res.Content) != 1 {
		s.w.t.Errorf("%s: %d content items", name, len(res.Content))
		return result{err: fmt.Errorf("bad shape")}
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		s.w.t.Errorf("%s: content is %T", name, res.Content[0])
		return result{err: fmt.Errorf("bad shape")}
	}
	out := s.w.output()
	_, _ = out.Write([]byte(text.Text))
	var p map[string]any
	if err := json.Unmarshal([]byte(text.Text), &p); err != nil {
		var anyv any
		if json.Unmarshal([]byte(text.Text), &anyv) != nil {
			s.w.t.Errorf("%s: payload is not JSON: %q", name, text.Text)
		}
	}
	r := result{isError: res.IsError, payload: p}
	if r.isError {
		if c := r.code(); !documented[c] || p["message"] == "" {
			s.w.t.Errorf("%s: undocumented error payload %v", name, p)
		}
	}
	return r
}

// must is call for a call that has to succeed.
func (s *session) must(ctx context.Context, name string, args map[string]any) map[string]any {
	s.w.t.Helper()
	r := s.call(ctx, name, args)
	if r.err != nil || r.isError {
		s.w.t.Fatalf("%s: %v %v", name, r.err, r.payload)
	}
	return r.payload
}

func runtimeID(p map[string]any) string {
	id, _ := p["identity"].(map[string]any)
	rid, _ := id["runtime_id"].(string)
	return rid
}

// runStatus runs `resmongw status --json` and keeps its output as evidence.
func (w *world) runStatus(ctx context.Context, extraEnv ...string) string {
	cmd := exec.CommandContext(ctx, bin, "status", "--json")
	cmd.Env = w.env(extraEnv...)
	out, errb := w.output(), w.output()
	cmd.Stdout, cmd.Stderr = out, errb
	_ = cmd.Run()
	return out.String()
}

// ---- end-of-test checks ----

// assertTokenFree: no token minted in this test appears in anything a process printed,
// any tool result, any status output, the daemon log, or any harness config under HOME.
func (w *world) assertTokenFree() {
	var texts []string
	for _, b := range w.outputs {
		texts = append(texts, b.String())
	}
	_ = filepath.Walk(w.home, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Size() < 64<<20 {
			if b, err := os.ReadFile(p); err == nil {
				texts = append(texts, string(b))
			}
		}
		return nil
	})
	for _, tok := range w.tokens {
		for _, s := range texts {
			if strings.Contains(s, tok) {
				w.t.Errorf("a backend token appears in the test's evidence (%d bytes searched)", len(s))
				return
			}
		}
	}
}

// assertGuardRespected: every request the simulators saw went to 127.0.0.1:<its port>,
// with no Origin and with a token.
func (w *world) assertGuardRespected() {
	for _, s := range w.sims {
		for _, r := range s.Requests() {
			if !strings.HasPrefix(r.Host, "127.0.0.1:") || r.Origin != "" || !r.HasAuth {
				w.t.Errorf("request %s %s: Host %q Origin %q auth %v", r.Method, r.Path, r.Host, r.Origin, r.HasAuth)
			}
		}
	}
}

// assertNoLeaks: every child we started was reaped and no daemon of this test lives on.
func (w *world) assertNoLeaks() {
	for _, c := range w.children {
		if c.ProcessState == nil {
			w.t.Errorf("child %v was never reaped", c.Args)
		}
	}
	for _, pid := range w.daemons {
		if alive(pid) {
			w.t.Errorf("daemon %d outlived its test", pid)
		}
	}
	if kids := childPIDs(); len(kids) > 0 {
		w.t.Errorf("child processes left: %v", kids)
	}
}

// childPIDs lists live (non-zombie) processes whose parent is this test binary.
func childPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	me := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(me) {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !alive(pid)
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// eventually retries a tool call until ok accepts the result (bounded): the watcher needs a
// moment to see file changes.
func (s *session) eventually(ctx context.Context, limit time.Duration, name string, args map[string]any, ok func(result) bool, what string) result {
	s.w.t.Helper()
	var last result
	deadline := time.Now().Add(limit)
	for {
		last = s.call(ctx, name, args)
		if ok(last) {
			return last
		}
		if time.Now().After(deadline) {
			s.w.t.Fatalf("timed out after %v waiting for %s; last %s answer: %v %v", limit, what, name, last.payload, last.err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func testCtx(t *testing.T, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}

// syncBuffer is a bytes.Buffer safe for a process's writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
