package proxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// Shared scaffolding for this package's tests: a fake backend on loopback (coreFake), a
// discovery source the test drives (coreSource), the simulator client, and assertions.

// coreTestTimeout bounds every test's waits; nothing here should come near it.
const coreTestTimeout = 20 * time.Second

func coreCtx(t *testing.T) context.Context { return testkit.Context(t, coreTestTimeout) }

// coreFake is a fake backend on 127.0.0.1: it checks the bearer token like the guard does,
// counts requests and new connections, and answers with handle.
type coreFake struct {
	srv       *httptest.Server
	token     string
	runtimeID string
	requests  atomic.Int64
	conns     atomic.Int64
	closed    atomic.Int64
	mu        sync.Mutex
	paths     []string
	handle    http.HandlerFunc
}

func newCoreFake(t testing.TB, handle http.HandlerFunc) *coreFake {
	t.Helper()
	f := &coreFake{token: testkit.NewToken(t), runtimeID: testkit.NewRuntimeID(t), handle: handle}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		f.mu.Lock()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":{"reason":"token_invalid","message":"The local API token on this request is not this resmon's."}}`))
			return
		}
		if f.handle != nil {
			f.handle(w, r)
			return
		}
		coreWriteJSON(w, 200, map[string]any{"status": "ok", "identity": f.identity()})
	}))
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			f.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			f.closed.Add(1)
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// newHangingFake is a backend that takes every request and never answers it: the request
// waits until the client gives up (or the test ends).
func newHangingFake(t testing.TB) *coreFake {
	t.Helper()
	release := make(chan struct{})
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close, so nothing waits on it
	return f
}

func (f *coreFake) identity() map[string]any {
	return map[string]any{"contract_version": 1, "runtime_id": f.runtimeID, "schema_version": 21, "corpus_id": nil, "build_id": nil}
}

func (f *coreFake) port() int {
	p, _ := strconv.Atoi(f.srv.URL[len("http://127.0.0.1:"):])
	return p
}

func (f *coreFake) backend() *discovery.Backend {
	return &discovery.Backend{
		BaseURL:  f.srv.URL,
		Port:     f.port(),
		Token:    discovery.Token(f.token),
		Version:  "2.3.0",
		Identity: &discovery.Identity{ContractVersion: 1, RuntimeID: f.runtimeID},
	}
}

func coreWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// coreSource is a fake discovery.Source whose state the test sets.
type coreSource struct {
	mu        sync.Mutex
	st        discovery.State
	changed   chan struct{}
	rechecks  atomic.Int64
	onRecheck func()
}

func newCoreSource() *coreSource { return &coreSource{changed: make(chan struct{})} }

func (s *coreSource) Current() discovery.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *coreSource) Wait(ctx context.Context, gen uint64) discovery.State {
	for {
		s.mu.Lock()
		st, ch := s.st, s.changed
		s.mu.Unlock()
		if st.Generation > gen {
			return st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Current()
		}
	}
}

func (s *coreSource) Recheck() {
	s.rechecks.Add(1)
	if s.onRecheck != nil {
		s.onRecheck()
	}
}

// set publishes a new state with the next generation.
func (s *coreSource) set(b *discovery.Backend, u *discovery.Unavailable) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st = discovery.State{Generation: s.st.Generation + 1, Backend: b, Unavailable: u}
	close(s.changed)
	s.changed = make(chan struct{})
	return s.st.Generation
}

// coreDeadPort returns a loopback port nothing listens on (it was free a moment ago).
func coreDeadPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return p
}

// coreToolErr asserts err is a *ToolError and returns it.
func coreToolErr(t *testing.T, err error) *ToolError {
	t.Helper()
	te, ok := err.(*ToolError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ToolError", err, err)
	}
	return te
}

func wantErr(t *testing.T, te *ToolError, code, msgPart string) {
	t.Helper()
	if te == nil {
		t.Fatalf("want %s error containing %q, got success", code, msgPart)
	}
	if te.Code != code || !strings.Contains(te.Message, msgPart) {
		t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, code, msgPart)
	}
}

func wantNoErr(t *testing.T, te *ToolError) {
	t.Helper()
	if te != nil {
		t.Fatalf("unexpected error %s: %s %v", te.Code, te.Message, te.Detail)
	}
}

func paths(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		s := r.Method + " " + r.Path
		if len(r.Query) > 0 {
			s += "?" + r.Query.Encode()
		}
		out = append(out, s)
	}
	return out
}

func startSimClient(t *testing.T, opts resmonsim.Options) (*resmonsim.Sim, *Client) {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	sim, err := resmonsim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	c := NewClient(&discovery.Backend{BaseURL: sim.BaseURL(), Port: sim.Port(), Token: discovery.Token(sim.Token())},
		&ClientOptions{RequestTimeout: 10 * time.Second})
	t.Cleanup(c.Close)
	return sim, c
}

// patient options: any wait the code is not supposed to make would hit the test's context
// instead and fail the assertion on the result, so no timing is asserted.
var corePatient = &UpstreamOptions{FirstCheckWait: time.Hour, RetryWait: time.Hour}

// coreDropper answers every request by dropping the connection, like a backend killed
// mid-request.
func coreDropper(w http.ResponseWriter, r *http.Request) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// coreEventually waits (bounded) for cond, for effects that happen on another goroutine.
func coreEventually(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, coreTestTimeout, cond, "the condition")
}

// The doubles and the real types satisfy the interfaces the code uses.
var (
	_ discovery.Source = (*coreSource)(nil)
	_ API              = (*Upstream)(nil)
	_ API              = (*Client)(nil)
)
