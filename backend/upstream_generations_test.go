package backend_test

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

// The upstream follows backend generations: the first check, one client per generation, a
// hot swap with the simulator.

// coreSimBackend describes the simulator's current instance the way the watcher would.
func coreSimBackend(sim *resmonsim.Sim) *discovery.Backend {
	return &discovery.Backend{
		BaseURL:  sim.BaseURL(),
		Port:     sim.Port(),
		Token:    discovery.Token(sim.Token()),
		Identity: &discovery.Identity{ContractVersion: 1, RuntimeID: sim.RuntimeID()},
	}
}

// TestUpstreamHotSwapWithSimulator restarts the simulated backend (same port: the old token
// is refused; new port: the old one refuses connections) and checks that reads carry on
// across each restart with one retry, and that identity-bound calls see the new instance.
func TestUpstreamHotSwapWithSimulator(t *testing.T) {
	sim, err := resmonsim.Start(resmonsim.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	src := backendtest.NewSource()
	src.Set(coreSimBackend(sim), nil)
	src.OnRecheck = func() { src.Set(coreSimBackend(sim), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	ctx := backendtest.Context(t)

	first := sim.RuntimeID()
	health := func(expected string) (map[string]any, error) {
		r := &backend.Request{Method: "GET", Path: "/api/health", ExpectedRuntimeID: expected}
		if expected != "" {
			r.Query = url.Values{"expected_runtime_id": {expected}}
		}
		v, err := u.Call(ctx, r)
		m, _ := v.(map[string]any)
		return m, err
	}
	if _, err := health(first); err != nil {
		t.Fatal(err)
	}

	for _, newPort := range []bool{false, true} {
		before := sim.RuntimeID()
		if err := sim.Restart(resmonsim.RestartOptions{NewPort: newPort}); err != nil {
			t.Fatal(err)
		}
		info := &backend.CallInfo{}
		v, err := u.Call(backend.WithCallInfo(ctx, info), &backend.Request{Method: "GET", Path: "/api/health"})
		if err != nil {
			t.Fatalf("new port %v: %v", newPort, err)
		}
		id, _ := v.(map[string]any)["identity"].(map[string]any)
		if id["runtime_id"] != sim.RuntimeID() || sim.RuntimeID() == before || !info.Retried || info.Requests != 2 {
			t.Fatalf("new port %v: identity %v, info %+v", newPort, id, *info)
		}
		// The old identity is now a different running app; the new one matches.
		if _, err := health(before); coreToolErr(t, err).Code != backend.CodeInstanceMismatch {
			t.Fatalf("old identity: %v", err)
		}
		if _, err := health(sim.RuntimeID()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpstreamUnavailableFailsAtOnce(t *testing.T) {
	src := backendtest.NewSource()
	un := &discovery.Unavailable{Reason: discovery.ReasonNotRunning, Message: "resmon is not running. Start the resmon app and try again.",
		Tried: []string{"http://127.0.0.1:8742"}}
	src.Set(nil, un)
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message != un.Message || !reflect.DeepEqual(te.Detail, un.Detail()) {
		t.Fatalf("%+v", te)
	}
	if src.Rechecks.Load() != 0 {
		t.Fatal("an unavailable state triggered a recheck")
	}
}

func TestUpstreamWaitsForFirstCheck(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	done := make(chan error, 1)
	go func() {
		_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"})
		done <- err
	}()
	src.Set(f.Backend(), nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f.Requests.Load() != 1 {
		t.Fatalf("%d requests", f.Requests.Load())
	}
}

func TestUpstreamFirstCheckWithoutGenerationBump(t *testing.T) {
	// A source whose first check fills the state but leaves the generation at 0 is still seen.
	f := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	done := make(chan error, 1)
	go func() {
		_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"})
		done <- err
	}()
	src.Mu.Lock()
	src.State = discovery.State{Backend: f.Backend()}
	src.Mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestUpstreamFirstCheckWaitIsBounded(t *testing.T) {
	src := backendtest.NewSource()
	u := backend.NewUpstream(src, &backend.UpstreamOptions{FirstCheckWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message == backend.MsgCancelled {
		t.Fatalf("%+v", te)
	}
}

func TestUpstreamSwapsClientPerGeneration(t *testing.T) {
	a := backendtest.NewFake(t, nil)
	b := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	ctx := backendtest.Context(t)
	for i := 0; i < 2; i++ {
		if _, err := u.Call(ctx, &backend.Request{Path: "/api/health"}); err != nil {
			t.Fatal(err)
		}
	}
	if a.Conns.Load() != 1 {
		t.Fatalf("same generation used %d connections", a.Conns.Load())
	}
	gen := src.Set(b.Backend(), nil)
	info := &backend.CallInfo{}
	if _, err := u.Call(backend.WithCallInfo(ctx, info), &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if b.Requests.Load() != 1 || a.Requests.Load() != 2 {
		t.Fatalf("a=%d b=%d requests", a.Requests.Load(), b.Requests.Load())
	}
	want := backend.CallInfo{Generation: gen, RuntimeID: b.RuntimeID, BaseURL: b.Server.URL, Requests: 1}
	if *info != want {
		t.Fatalf("info %+v, want %+v", *info, want)
	}
	// The old generation's keep-alive connection is closed, not left for reuse.
	coreEventually(t, func() bool { return a.Closed.Load() == 1 })

	// Going down drops the client too.
	src.Set(nil, &discovery.Unavailable{Message: "down", Tried: []string{b.Server.URL}})
	if _, err := u.Call(ctx, &backend.Request{Path: "/api/health"}); err == nil {
		t.Fatal("call succeeded while unavailable")
	}
	coreEventually(t, func() bool { return b.Closed.Load() == 1 })
}

func TestUpstreamCloseDropsIdleConnections(t *testing.T) {
	a := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	u := backend.NewUpstream(src, backendtest.Patient)
	if _, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	u.Close()
	coreEventually(t, func() bool { return a.Closed.Load() == 1 })
	// Still usable after Close (sessions may be winding down).
	if _, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	u.Close()
}
