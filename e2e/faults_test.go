package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/resmonsim"
)

func ok(r result) bool { return r.err == nil && !r.isError }

func unavailable(r result) bool { return r.code() == backend.CodeBackendUnavailable }

// posts counts the write requests a simulator received on a path.
func posts(s *resmonsim.Sim, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == "POST" && r.Path == path {
			n++
		}
	}
	return n
}

// toolRequests is what reached the backend other than GET /api/health: the daemon's watcher
// re-verifies the backend on its own schedule (and whenever a state file changes), so a
// health check may land at any moment; a test that asks "did this call send anything" for a
// tool other than health counts only these.
func toolRequests(s *resmonsim.Sim) []resmonsim.Recorded {
	var out []resmonsim.Recorded
	for _, r := range s.Requests() {
		if r.Method != "GET" || r.Path != "/api/health" {
			out = append(out, r)
		}
	}
	return out
}

// A backend that dies in the middle of calls: the read and the write both come back as
// backend_unavailable (the write says its effect is unknown), the write reached the backend
// exactly once and is not replayed, and once the app is back the next call is served by the
// new instance.
func TestFaultBackendKilledMidCall(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	old := runtimeID(s.must(ctx, "health", nil))

	sim.SetDelay(time.Minute) // every reply hangs until the kill
	var wg sync.WaitGroup
	var read, write result
	wg.Add(2)
	go func() { defer wg.Done(); read = s.call(ctx, "search_corpus", map[string]any{"query": "graph"}) }()
	go func() { defer wg.Done(); write = s.call(ctx, "run_routine", map[string]any{"routine_id": 1}) }()
	testkit.WaitFor(t, 20*time.Second, func() bool { return posts(sim, "/api/routines/1/run") == 1 && len(sim.Requests()) >= 3 },
		"both calls to reach the backend")
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !unavailable(read) || !unavailable(write) {
		t.Fatalf("after the kill: read %v %v, write %v %v", read.code(), read.payload, write.code(), write.payload)
	}
	if msg, _ := write.payload["message"].(string); msg != backend.MsgWriteInterrupted {
		t.Fatalf("interrupted write says %q", msg)
	}
	sim.SetDelay(0)
	w.restartSim(sim, resmonsim.RestartOptions{}) // the app comes back: new token, new runtime id
	r := s.eventually(ctx, 20*time.Second, "health", nil, ok, "the restarted backend")
	if got := runtimeID(r.payload); got != sim.RuntimeID() || got == old {
		t.Fatalf("served by %s, want the new instance %s (old %s)", got, sim.RuntimeID(), old)
	}
	if n := posts(sim, "/api/routines/1/run"); n != 1 {
		t.Fatalf("the interrupted write reached the backend %d times, want exactly 1 (no replay)", n)
	}
}

// The app restarts on the same port and then on a new one, each time with a new token and
// runtime id: every answer names the instance that actually served it.
func TestFaultBackendRestartSameAndNewPort(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	seen := map[string]bool{runtimeID(s.must(ctx, "health", nil)): true}
	for _, o := range []resmonsim.RestartOptions{{}, {NewPort: true}, {InPlace: true}} {
		oldPort := sim.Port()
		w.restartSim(sim, o)
		if o.NewPort == (sim.Port() == oldPort) {
			t.Fatalf("restart %+v: port %d -> %d", o, oldPort, sim.Port())
		}
		r := s.eventually(ctx, 20*time.Second, "health", nil, ok, "the restarted backend")
		rid := runtimeID(r.payload)
		if rid != sim.RuntimeID() || seen[rid] {
			t.Fatalf("restart %+v: answered by %s, want the new %s", o, rid, sim.RuntimeID())
		}
		seen[rid] = true
		// The simulator agrees: the request that answered came to the new instance.
		reqs := sim.Requests()
		if last := reqs[len(reqs)-1]; last.RuntimeID != rid || last.Path != "/api/health" {
			t.Fatalf("the last request reached %s %s", last.RuntimeID, last.Path)
		}
	}
}

// A token file left behind by an earlier run: the backend answers 401 token_invalid and the
// tool says so with the token_refused message; a fresh file brings it back.
func TestFaultStaleTokenFile(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	if err := sim.WriteStaleToken(); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(sim.TokenFile())
	if err != nil {
		t.Fatal(err)
	}
	w.addToken(string(stale))
	r := s.eventually(ctx, 20*time.Second, "health", nil, func(r result) bool {
		msg, _ := r.payload["message"].(string)
		return unavailable(r) && strings.Contains(msg, "refused the local API token found for it")
	}, "the token_refused message")
	detail, _ := r.payload["detail"].(map[string]any)
	if refused, _ := detail["token_refused"].([]any); len(refused) != 1 {
		t.Fatalf("detail %v, want token_refused naming the port", detail)
	}
	saw401 := false
	for _, q := range sim.Requests() {
		saw401 = saw401 || (q.Status == 401 && q.HasAuth && !q.AuthOK)
	}
	if !saw401 {
		t.Fatal("the simulator never saw the stale token refused")
	}
	w.restartSim(sim, resmonsim.RestartOptions{})
	if got := runtimeID(s.eventually(ctx, 20*time.Second, "health", nil, ok, "recovery").payload); got != sim.RuntimeID() {
		t.Fatalf("recovered onto %s, want %s", got, sim.RuntimeID())
	}
}

// The port file removed, truncated, holding garbage, or naming a dead port: each gives
// backend_unavailable with the matching reason, never an answer from elsewhere, and writing
// the right port back recovers without reconnecting.
func TestFaultPortFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	dead := resmonsim.Options{StateDir: filepath.Join(t.TempDir(), "other")}
	other := w.startSim(dead) // a live backend in another state dir must never answer for ours
	deadPort := other.Port()
	if err := other.Stop(); err != nil {
		t.Fatal(err)
	}
	// A crashed app leaves its token file next to the port file that names the dead port.
	leftover := strings.Repeat("L", 43)
	w.addToken(leftover)
	if err := os.WriteFile(discovery.TokenFile(sim.StateDir(), deadPort), []byte(leftover), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 120*time.Second)
	s := w.connect(ctx, simEnv(sim)...)
	s.must(ctx, "health", nil)
	pf := sim.PortFile()
	good := fmt.Sprint(sim.Port())
	for _, c := range []struct {
		name, content string
		remove        bool
		want          string // a piece of the message
	}{
		{name: "garbage", content: "not-a-port\n", want: "port file"},
		{name: "dead port", content: fmt.Sprint(deadPort), want: "not running"},
		{name: "truncated then garbage", content: "99999999", want: "port file"},
		{name: "removed", remove: true, want: ""},
	} {
		var err error
		if c.remove {
			err = os.Remove(pf)
		} else {
			err = os.WriteFile(pf, []byte(c.content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		r := s.eventually(ctx, 20*time.Second, "health", nil, func(r result) bool {
			msg, _ := r.payload["message"].(string)
			return unavailable(r) && strings.Contains(msg, c.want)
		}, c.name)
		if c.name == "dead port" {
			detail, _ := r.payload["detail"].(map[string]any)
			if tried := fmt.Sprint(detail["tried"]); !strings.Contains(tried, fmt.Sprint(deadPort)) {
				t.Fatalf("dead port: tried %s", tried)
			}
		}
		if err := os.WriteFile(pf, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := runtimeID(s.eventually(ctx, 20*time.Second, "health", nil, ok, c.name+" repaired").payload); got != sim.RuntimeID() {
			t.Fatalf("%s: recovered onto %s", c.name, got)
		}
	}
}

// The whole state directory is deleted (the app is uninstalled or its data wiped) and then
// recreated by a new start: the watcher follows it back.
func TestFaultStateDirDeletedAndRecreated(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sim.StateDir()); err != nil {
		t.Fatal(err)
	}
	s.eventually(ctx, 20*time.Second, "health", nil, unavailable, "backend_unavailable with the state dir gone")
	if err := os.MkdirAll(sim.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	w.restartSim(sim, resmonsim.RestartOptions{NewPort: true})
	if got := runtimeID(s.eventually(ctx, 20*time.Second, "health", nil, ok, "the recreated state dir").payload); got != sim.RuntimeID() {
		t.Fatalf("recovered onto %s, want %s", got, sim.RuntimeID())
	}
}

// A real `resmongw dev backend` process is SIGKILLed (its files stay behind, naming a dead
// port); the daemon reports it unavailable, and a new process on a new port is picked up.
func TestFaultBackendProcessSIGKILL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	state := filepath.Join(t.TempDir(), "resmon")
	start := func() *testkit.Proc {
		cmd := exec.Command(bin, "dev", "backend", "--state-dir", state)
		cmd.Env = w.Env()
		cmd.Stdout, cmd.Stderr = w.output(), w.output()
		return w.start(cmd)
	}
	tokens := func() {
		ents, _ := filepath.Glob(filepath.Join(state, discovery.TokenFilePrefix+"*"))
		for _, e := range ents {
			if b, err := os.ReadFile(e); err == nil && len(b) >= 16 {
				w.addToken(strings.TrimSpace(string(b)))
			}
		}
	}
	first := start()
	ctx := testkit.Context(t, 90*time.Second)
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { _, err := os.Stat(filepath.Join(state, discovery.PortFileName)); return err == nil }, "the port file")
	tokens()
	s := w.connect(ctx, "RESMON_STATE_DIR="+state)
	old := runtimeID(s.eventually(ctx, 20*time.Second, "health", nil, ok, "the dev backend").payload)
	if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.eventually(ctx, 20*time.Second, "health", nil, unavailable, "backend_unavailable after SIGKILL")
	start()
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { tokens(); return len(w.tokens) >= 2 }, "the new token file")
	r := s.eventually(ctx, 20*time.Second, "health", nil, ok, "the second dev backend")
	if rid := runtimeID(r.payload); rid == old || rid == "" {
		t.Fatalf("after the restart: runtime id %q (old %q)", rid, old)
	}
}

// A slow backend: a call the harness gives up on ends (the client's cancel reaches the
// daemon), sessions on another backend are answered meanwhile, and the daemon's request
// timeout turns a hung backend into backend_unavailable (shown in-process with a short
// timeout, since the daemon's is the contract's 30 s).
func TestFaultSlowBackend(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	slow := w.startSim(resmonsim.Options{})
	fast := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 90*time.Second)
	a := w.connect(ctx, simEnv(slow)...)
	b := w.connect(ctx, simEnv(fast)...)
	a.must(ctx, "health", nil)
	// Only the search hangs: the daemon re-verifies the backend on its own schedule, and a
	// health check hung past its 3 s probe timeout would mark the backend down, so that the
	// call below were answered unavailable without being sent (on a loaded machine, where the
	// call takes seconds to reach the daemon, that happened).
	slow.SetPathDelay("/api/explorer/search", time.Minute)

	hung := make(chan result, 1)
	cctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	go func() { hung <- a.call(cctx, "search_corpus", map[string]any{"query": "graph"}) }()
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return reached(slow, "/api/explorer/search") }, "the slow call to reach the backend")
	// While that call hangs, the other target is served.
	for i := 0; i < 5; i++ {
		b.must(ctx, "search_corpus", map[string]any{"query": "graph"})
	}
	select {
	case r := <-hung:
		t.Fatalf("the slow call ended before the harness gave up: %v %v", r.code(), r.payload)
	default:
	}
	// The harness gives up (as one does at its own deadline): the call ends with that.
	giveUp()
	r := <-hung
	if r.err == nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the abandoned call: %v %v", r.err, r.payload)
	}
	// The session that gave up still works once the backend is fast again.
	slow.SetPathDelay("/api/explorer/search", 0)
	a.must(ctx, "search_corpus", map[string]any{"query": "graph"})

	// The request timeout itself, in-process: the same watcher and upstream the daemon builds,
	// with the bounds the test must cross set small. The watcher verifies the backend first,
	// so the call is sent and it is the request timeout that ends it (detail.reason says so);
	// the re-check that follows hangs too, and RetryWait ends the wait for it.
	wt := discovery.NewWatcher(discovery.Target{StateDir: slow.StateDir(), Home: w.Home}, nil)
	if err := wt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	waitVerified(ctx, t, wt)
	// The request timeout covers the connect too: a first call, answered at once, leaves a
	// connection in the pool, so the hung call below is written on it and it is the answer
	// that times out (with a 1 s timeout and a fresh connection, a loaded machine's connect
	// ran past it: ConnectTimeout).
	up := backend.NewUpstream(wt, &backend.UpstreamOptions{RetryWait: 50 * time.Millisecond,
		Client: &backend.ClientOptions{RequestTimeout: 5 * time.Second}})
	defer up.Close()
	srv := mcpserver.NewServer(up, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "inproc", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	in := &session{w: w, cs: cs}
	in.must(ctx, "search_corpus", map[string]any{"query": "graph"})
	slow.SetDelay(time.Minute)
	r = in.call(ctx, "search_corpus", map[string]any{"query": "graph"})
	if detail, _ := r.payload["detail"].(map[string]any); !unavailable(r) || detail["reason"] != "ReadTimeout" {
		t.Fatalf("a hung backend past the request timeout: %v %v", r.code(), r.payload)
	}
	slow.SetDelay(0)
}

// reached reports whether the simulator has received a request for path.
func reached(s *resmonsim.Sim, path string) bool {
	for _, r := range s.Requests() {
		if r.Path == path {
			return true
		}
	}
	return false
}

// waitVerified waits for the generation in which wt verifies its backend, bounded by ctx.
// A watcher publishes its first pass even when that pass failed, and retries it (with
// backoff, then on its poll): on a starved machine the first health probe, which includes
// the in-process simulator serving it, can outlast its 3 s timeout, and that pass says "not
// running" although the backend is fine. So a failed pass is logged, not fatal; a backend
// that is never verified still fails the test when ctx ends.
func waitVerified(ctx context.Context, t *testing.T, wt *discovery.Watcher) {
	t.Helper()
	for st := wt.Current(); st.Backend == nil; st = wt.Wait(ctx, st.Generation) {
		if ctx.Err() != nil {
			t.Fatalf("the watcher did not verify the backend: %+v chain=%q", st, chainOf(st))
		}
		if st.Unavailable != nil {
			t.Logf("generation %d: the backend is unavailable (the watcher retries): %v chain=%q",
				st.Generation, st.Unavailable, chainOf(st))
		}
	}
}

// chainOf is the discovery chain of an unavailable state, for a failure message.
func chainOf(st discovery.State) []string {
	if st.Unavailable == nil {
		return nil
	}
	return st.Unavailable.Chain
}
