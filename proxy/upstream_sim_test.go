package proxy

import (
	"net/url"
	"testing"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

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
	src := newCoreSource()
	src.set(coreSimBackend(sim), nil)
	src.onRecheck = func() { src.set(coreSimBackend(sim), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	ctx := coreCtx(t)

	first := sim.RuntimeID()
	health := func(expected string) (map[string]any, error) {
		r := &Request{Method: "GET", Path: "/api/health", ExpectedRuntimeID: expected}
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
		info := &CallInfo{}
		v, err := u.Call(WithCallInfo(ctx, info), &Request{Method: "GET", Path: "/api/health"})
		if err != nil {
			t.Fatalf("new port %v: %v", newPort, err)
		}
		id, _ := v.(map[string]any)["identity"].(map[string]any)
		if id["runtime_id"] != sim.RuntimeID() || sim.RuntimeID() == before || !info.Retried || info.Requests != 2 {
			t.Fatalf("new port %v: identity %v, info %+v", newPort, id, *info)
		}
		// The old identity is now a different running app; the new one matches.
		if _, err := health(before); coreToolErr(t, err).Code != CodeInstanceMismatch {
			t.Fatalf("old identity: %v", err)
		}
		if _, err := health(sim.RuntimeID()); err != nil {
			t.Fatal(err)
		}
	}
}
