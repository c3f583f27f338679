package daemon_test

import (
	"testing"

	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/toolfacts"
)

// The backend restarts (same port, then a new port) under an open session: the next call
// succeeds on the new instance without the harness reconnecting.
func TestBackendRestartMidSession(t *testing.T) {
	t.Parallel()
	w, sim, ctx := servedWorld(t)
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
	t.Parallel()
	w, sim, ctx := servedWorld(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	if err := sim.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, sess := range []*shimSession{s, w.connect(ctx, "2025-11-25", simEnv(sim)...)} {
		tools, err := sess.cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != len(toolfacts.Rows) {
			t.Fatalf("tools/list with the backend down: %v, %v", err, tools)
		}
		for tool, args := range map[string]map[string]any{"health": {}, "search_corpus": {"query": "x"}} {
			r := call(ctx, t, sess.cs, tool, args)
			if !r.isError || r.payload["error"] != "backend_unavailable" {
				t.Fatalf("%s with the backend down: %v", tool, r.payload)
			}
		}
	}
}
