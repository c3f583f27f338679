// Package backendtest is test scaffolding for the backend client and its users: a fake resmon
// on loopback, a discovery source the test drives, the simulator's client, and assertions.
package backendtest

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

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// Timeout bounds every test's waits; nothing here should come near it.
const Timeout = 20 * time.Second

// Context is the test's context, bounded by Timeout.
func Context(t *testing.T) context.Context { return testkit.Context(t, Timeout) }

// Fake is a fake backend on 127.0.0.1: it checks the bearer token like the guard does,
// counts requests and new connections, and answers with handle.
type Fake struct {
	Server    *httptest.Server
	Token     string
	RuntimeID string
	Requests  atomic.Int64
	Conns     atomic.Int64
	Closed    atomic.Int64
	mu        sync.Mutex
	paths     []string
	handle    http.HandlerFunc
}

func NewFake(t testing.TB, handle http.HandlerFunc) *Fake {
	t.Helper()
	f := &Fake{Token: testkit.NewToken(t), RuntimeID: testkit.NewRuntimeID(t), handle: handle}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.Requests.Add(1)
		f.mu.Lock()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.Token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":{"reason":"token_invalid","message":"The local API token on this request is not this resmon's."}}`))
			return
		}
		if f.handle != nil {
			f.handle(w, r)
			return
		}
		WriteJSON(w, 200, map[string]any{"status": "ok", "identity": f.identity()})
	}))
	f.Server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			f.Conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			f.Closed.Add(1)
		}
	}
	f.Server.Start()
	t.Cleanup(f.Server.Close)
	return f
}

// NewHangingFake is a backend that takes every request and never answers it: the request
// waits until the client gives up (or the test ends).
func NewHangingFake(t testing.TB) *Fake {
	t.Helper()
	release := make(chan struct{})
	f := NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close, so nothing waits on it
	return f
}

func (f *Fake) identity() map[string]any {
	return map[string]any{"contract_version": 1, "runtime_id": f.RuntimeID, "schema_version": 21, "corpus_id": nil, "build_id": nil}
}

// Port is the fake's loopback port.
func (f *Fake) Port() int {
	p, _ := strconv.Atoi(f.Server.URL[len("http://127.0.0.1:"):])
	return p
}

// Backend is the verified backend a client of the fake is given.
func (f *Fake) Backend() *discovery.Backend {
	return &discovery.Backend{
		BaseURL:  f.Server.URL,
		Port:     f.Port(),
		Token:    discovery.Token(f.Token),
		Version:  "2.3.0",
		Identity: &discovery.Identity{ContractVersion: 1, RuntimeID: f.RuntimeID},
	}
}

// WriteJSON answers with v as JSON under status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Source is a fake discovery.Source whose state the test sets.
type Source struct {
	Mu        sync.Mutex
	State     discovery.State
	changed   chan struct{}
	Rechecks  atomic.Int64
	OnRecheck func()
}

func NewSource() *Source { return &Source{changed: make(chan struct{})} }

func (s *Source) Current() discovery.State {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.State
}

func (s *Source) Wait(ctx context.Context, gen uint64) discovery.State {
	for {
		s.Mu.Lock()
		st, ch := s.State, s.changed
		s.Mu.Unlock()
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

func (s *Source) Recheck() {
	s.Rechecks.Add(1)
	if s.OnRecheck != nil {
		s.OnRecheck()
	}
}

// Set publishes a new state with the next generation.
func (s *Source) Set(b *discovery.Backend, u *discovery.Unavailable) uint64 {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.State = discovery.State{Generation: s.State.Generation + 1, Backend: b, Unavailable: u}
	close(s.changed)
	s.changed = make(chan struct{})
	return s.State.Generation
}

// WantErr fails the test unless te has code and a message containing msgPart.
func WantErr(t *testing.T, te *backend.ToolError, code, msgPart string) {
	t.Helper()
	if te == nil {
		t.Fatalf("want %s error containing %q, got success", code, msgPart)
	}
	if te.Code != code || !strings.Contains(te.Message, msgPart) {
		t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, code, msgPart)
	}
}

// WantNoErr fails the test on any tool error.
func WantNoErr(t *testing.T, te *backend.ToolError) {
	t.Helper()
	if te != nil {
		t.Fatalf("unexpected error %s: %s %v", te.Code, te.Message, te.Detail)
	}
}

// Paths are the requests as "METHOD /path?query", for comparing what was sent.
func Paths(reqs []backend.Request) []string {
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

// StartSimClient starts the simulator and a client of it, both stopped when the test ends.
func StartSimClient(t *testing.T, opts resmonsim.Options) (*resmonsim.Sim, *backend.Client) {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	sim, err := resmonsim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	c := backend.NewClient(&discovery.Backend{BaseURL: sim.BaseURL(), Port: sim.Port(), Token: discovery.Token(sim.Token())},
		&backend.ClientOptions{RequestTimeout: 10 * time.Second})
	t.Cleanup(c.Close)
	return sim, c
}

// Patient options: any wait the code is not supposed to make would hit the test's context
// instead and fail the assertion on the result, so no timing is asserted.
var Patient = &backend.UpstreamOptions{FirstCheckWait: time.Hour, RetryWait: time.Hour}
