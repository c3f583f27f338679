package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// bin is the resmongw binary under test, built once; its directory is world-readable so a
// helper running as another user can execute it.
var bin string

func TestMain(m *testing.M) {
	testkit.MainWithBinary(m, &bin, false, func() error {
		// Every in-process goroutine (simulators, SDK clients, upstreams) must be gone.
		if err := goleak.Find(); err != nil {
			return fmt.Errorf("goroutine leak: %w", err)
		}
		// And every child process: the tests run in parallel, so a test checks the children
		// it knows (assertNoLeaks) and this catches one nobody tracked.
		if kids := testkit.ChildPIDs(); len(kids) > 0 {
			return fmt.Errorf("child processes left: %v", kids)
		}
		return nil
	})
}

// world is one user's environment for one test (home, state home, a short socket path) and
// everything the test's processes printed, to be searched for tokens at the end.
type world struct {
	*testkit.World

	mu       sync.Mutex
	outputs  []*testkit.SyncBuffer // every stdout/stderr of every process, every status output, every tool result
	tokens   []string              // every token a simulator minted or we planted
	sims     []*resmonsim.Sim
	daemons  []int           // pids of daemons seen (started by us or autostarted)
	children []*testkit.Proc // every process we started
	shims    []*exec.Cmd     // every harness session's shim (the SDK's transport reaps it)
	// unawaited are shims whose session's Close returned without their exit (closeSession).
	unawaited []*exec.Cmd
	// serviceEnv, when set, replaces the explicit socket in Env: the user has the per-user
	// service installed and uses the default socket (newServiceWorld).
	serviceEnv  []string
	fakeService *testkit.FakeService // the service's fakes, in a service world
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{World: testkit.NewWorld(t)}
	// Registered before every process and simulator of the test, so it runs after they are
	// stopped (and before the world's directories go).
	t.Cleanup(func() {
		w.assertNoLeaks()
		w.assertTokenFree()
		w.assertGuardRespected()
	})
	// The simulators stop after every daemon and shim of the test (cleanups run last-first):
	// the daemon's exit closes its connections, and a spare pooled connection that never
	// carried a request would otherwise hold a simulator's shutdown for its whole bound
	// (net/http counts such a connection active for five seconds).
	t.Cleanup(w.stopSims)
	// Stop whatever daemon holds the lock (autostarted daemons are not our children).
	t.Cleanup(w.stopDaemon)
	return w
}

func (w *world) stopSims() {
	w.mu.Lock()
	sims := w.sims
	w.mu.Unlock()
	for _, s := range sims {
		_ = s.Stop()
	}
}

// servedSession is the usual start of a test: a world whose daemon (our child) listens, one
// simulated backend, the test's context (90 s at most) and a harness session on that backend.
func servedSession(t *testing.T) (*world, *resmonsim.Sim, context.Context, *session) {
	t.Helper()
	w := newWorld(t)
	w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 90*time.Second)
	return w, sim, ctx, w.connect(ctx, simEnv(sim)...)
}

func (w *world) output() *testkit.SyncBuffer {
	b := &testkit.SyncBuffer{}
	w.mu.Lock()
	w.outputs = append(w.outputs, b)
	w.mu.Unlock()
	return b
}

func (w *world) addToken(tok string) {
	if err := testkit.PlausibleToken(tok); err != nil {
		w.T.Fatal(err)
	}
	w.mu.Lock()
	w.tokens = append(w.tokens, tok)
	w.mu.Unlock()
}

// daemonPID is the pid the running daemon wrote into its lock file (0 when none); every pid
// seen is remembered for the leak check.
func (w *world) daemonPID() int {
	pid := w.DaemonPID()
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
	if pid := w.daemonPID(); pid > 0 && testkit.Alive(pid) {
		if err := testkit.StopPID(pid, testkit.WaitLimit); err != nil {
			w.T.Errorf("daemon: %v", err)
		}
	}
}

// startDaemon runs `resmongw serve` as our child and waits until it listens.
func (w *world) startDaemon() *testkit.Proc {
	w.T.Helper()
	p, err := w.Serve(bin, w.output(), w.output())
	if err != nil {
		w.T.Fatalf("daemon: %v", err)
	}
	w.track(p)
	w.daemonPID()
	return p
}

// start starts a child and remembers it, so the leak check can insist it was reaped.
func (w *world) start(cmd *exec.Cmd) *testkit.Proc {
	w.T.Helper()
	p, err := testkit.Start(cmd)
	if err != nil {
		w.T.Fatal(err)
	}
	w.track(p)
	return p
}

// track remembers a child for the leak check and stops it when the test ends.
func (w *world) track(p *testkit.Proc) {
	w.mu.Lock()
	w.children = append(w.children, p)
	w.mu.Unlock()
	w.T.Cleanup(func() {
		if p.Stop(testkit.WaitLimit) {
			w.T.Errorf("%v ignored SIGTERM", p.Cmd.Args)
		}
	})
}

// startSim starts an in-process simulated backend in its own state directory, stopped when
// the test ends (stopSims).
func (w *world) startSim(opts resmonsim.Options) *resmonsim.Sim {
	w.T.Helper()
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(w.T.TempDir(), "resmon")
	}
	s, err := resmonsim.Start(opts)
	if err != nil {
		w.T.Fatal(err)
	}
	w.mu.Lock()
	w.sims = append(w.sims, s)
	w.mu.Unlock()
	w.addToken(s.Token())
	return s
}

// restartSim restarts a simulator and records its new token.
func (w *world) restartSim(s *resmonsim.Sim, o resmonsim.RestartOptions) {
	w.T.Helper()
	if err := s.Restart(o); err != nil {
		w.T.Fatal(err)
	}
	w.addToken(s.Token())
}

func simEnv(s *resmonsim.Sim) []string { return []string{"RESMON_STATE_DIR=" + s.StateDir()} }

// session is a harness: a go-sdk client that launched `resmongw stdio`.
type session struct {
	w      *world
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
}

func (w *world) connect(ctx context.Context, extraEnv ...string) *session {
	w.T.Helper()
	return w.connectWith(ctx, bin, extraEnv...)
}

// tryConnect launches the shim from exe under a go-sdk client; the session is closed when the
// test ends.
func (w *world) tryConnect(ctx context.Context, exe string, extraEnv ...string) (*session, error) {
	return w.tryConnectAs(ctx, exe, &mcp.Implementation{Name: "e2e", Version: "1"}, "2025-11-25", extraEnv...)
}

// connectAs is world.connect by a client that names itself impl and speaks protocol.
func (w *world) connectAs(ctx context.Context, impl *mcp.Implementation, protocol string, extraEnv ...string) *session {
	w.T.Helper()
	s, err := w.tryConnectAs(ctx, bin, impl, protocol, extraEnv...)
	if err != nil {
		w.T.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	return s
}

func (w *world) tryConnectAs(ctx context.Context, exe string, impl *mcp.Implementation, protocol string, extraEnv ...string) (*session, error) {
	cmd := w.wrap(exec.Command(exe, "stdio"))
	cmd.Env = w.Env(extraEnv...)
	w.mu.Lock()
	w.shims = append(w.shims, cmd)
	w.mu.Unlock()
	s := &session{w: w, cmd: cmd, stderr: w.output()}
	cmd.Stderr = s.stderr
	// The person at this harness confirms every write the gateway asks about (a daemon of
	// this build asks under the default --writes=ask), so writes take the confirmed path.
	client := mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: confirmEveryWrite})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return s, err
	}
	s.cs = cs
	w.T.Cleanup(func() { w.closeSession(cs, cmd) })
	return s, nil
}

// closeSession closes a harness session. The SDK's Close waits for the shim's exit for
// TerminateDuration after closing its stdin, then after SIGTERM, then after SIGKILL; when it
// gives up (or finds the shim reaped between its kill and its wait) it returns without having
// received the exit, and its own goroutine reaps the shim unsynchronised: that shim's
// ProcessState may then not be read, so it is reported here and skipped by the leak check.
// (With TerminateDuration at testkit.WaitLimit that takes a shim hung for minutes; at 5 s,
// a shim starved on a loaded machine was enough, and the leak check's read was a data race.)
func (w *world) closeSession(cs *mcp.ClientSession, cmd *exec.Cmd) {
	err := cs.Close()
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return
	}
	w.T.Errorf("shim %v: %v", cmd.Args, err)
	w.mu.Lock()
	w.unawaited = append(w.unawaited, cmd)
	w.mu.Unlock()
}

func confirmEveryWrite(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
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

// documented is the contract's error model, plus the gateway's two write-confirmation
// codes (README, "Confirming writes"); every error result must carry one of these.
var documented = map[string]bool{
	backend.CodeBackendUnavailable: true, backend.CodeNotFound: true, backend.CodeInvalidArgument: true,
	backend.CodeConflict: true, backend.CodeUpstreamError: true, backend.CodeInternalError: true,
	backend.CodeIdentityUnavailable: true, backend.CodeInstanceMismatch: true,
}

// call makes one tool call and checks the shape every answer must have: one text item with
// a JSON object; an error has a documented code and a message.
func (s *session) call(ctx context.Context, name string, args map[string]any) result {
	s.w.T.Helper()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return result{err: err}
	}
	if len(res.Content) != 1 {
		s.w.T.Errorf("%s: %d content items", name, len(res.Content))
		return result{err: fmt.Errorf("bad shape")}
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		s.w.T.Errorf("%s: content is %T", name, res.Content[0])
		return result{err: fmt.Errorf("bad shape")}
	}
	out := s.w.output()
	_, _ = out.Write([]byte(text.Text))
	var p map[string]any
	if err := json.Unmarshal([]byte(text.Text), &p); err != nil {
		var anyv any
		if json.Unmarshal([]byte(text.Text), &anyv) != nil {
			s.w.T.Errorf("%s: payload is not JSON: %q", name, text.Text)
		}
	}
	r := result{isError: res.IsError, payload: p}
	if r.isError {
		if c := r.code(); !documented[c] || p["message"] == "" {
			s.w.T.Errorf("%s: undocumented error payload %v", name, p)
		}
	}
	return r
}

// must is call for a call that has to succeed.
func (s *session) must(ctx context.Context, name string, args map[string]any) map[string]any {
	s.w.T.Helper()
	r := s.call(ctx, name, args)
	if r.err != nil || r.isError {
		s.w.T.Fatalf("%s: %v %v", name, r.err, r.payload)
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
	cmd := w.wrap(exec.CommandContext(ctx, bin, "status", "--json"))
	cmd.Env = w.Env(extraEnv...)
	out, errb := w.output(), w.output()
	cmd.Stdout, cmd.Stderr = out, errb
	_ = cmd.Run()
	return out.String()
}

// ---- end-of-test checks ----

// assertTokenFree: no token minted in this test appears in anything a process printed,
// any tool result, any status output, the daemon log, or any harness config under HOME.
func (w *world) assertTokenFree() {
	var texts []testkit.Text
	for i, b := range w.outputs {
		texts = append(texts, testkit.Text{Name: "output " + strconv.Itoa(i), Body: b.String()})
	}
	texts = append(texts, testkit.FilesUnder(w.Home)...)
	leaks, err := testkit.TokenLeaks(w.tokens, texts...)
	if err != nil {
		w.T.Error(err)
	}
	if len(leaks) > 0 {
		w.T.Errorf("a backend token appears in the test's evidence: %s", strings.Join(leaks, ", "))
	}
}

// assertGuardRespected: every request the simulators saw went to 127.0.0.1:<its port>,
// with no Origin and with a token.
func (w *world) assertGuardRespected() {
	for _, s := range w.sims {
		for _, r := range s.Requests() {
			if !strings.HasPrefix(r.Host, "127.0.0.1:") || r.Origin != "" || !r.HasAuth {
				w.T.Errorf("request %s %s: Host %q Origin %q auth %v", r.Method, r.Path, r.Host, r.Origin, r.HasAuth)
			}
		}
	}
}

// assertNoLeaks: every child we started and every session's shim was reaped, and no daemon
// of this test lives on. (Other tests run beside this one, so the process-wide count of
// children is TestMain's check.)
func (w *world) assertNoLeaks() {
	for _, c := range w.children {
		if c.Cmd.ProcessState == nil {
			w.T.Errorf("child %v was never reaped", c.Cmd.Args)
		}
	}
	for _, c := range w.shims {
		if slices.Contains(w.unawaited, c) {
			continue // reported by closeSession
		}
		if c.Process != nil && c.ProcessState == nil {
			w.T.Errorf("shim %d was never reaped", c.Process.Pid)
		}
	}
	for _, pid := range w.daemons {
		if testkit.Alive(pid) {
			w.T.Errorf("daemon %d outlived its test", pid)
		}
	}
}

// eventually retries a tool call until ok accepts the result (bounded): the watcher needs a
// moment to see file changes.
func (s *session) eventually(ctx context.Context, limit time.Duration, name string, args map[string]any, ok func(result) bool, what string) result {
	s.w.T.Helper()
	var last result
	deadline := time.Now().Add(limit)
	for {
		last = s.call(ctx, name, args)
		if ok(last) {
			return last
		}
		if time.Now().After(deadline) {
			s.w.T.Fatalf("timed out after %v waiting for %s; last %s answer: %v %v", limit, what, name, last.payload, last.err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
