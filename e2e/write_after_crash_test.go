package e2e

import (
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
)

// The first write after the app is killed (its port and token files left behind, its sockets
// closed, the daemon's pooled connection to it dead) reaches nothing: the answer says it was
// not sent — or, once the daemon has noticed, that resmon is not running — and never that the
// change's outcome is unknown or that resmon stopped "part-way".
func TestFaultFirstWriteAfterAKillSaysNotSent(t *testing.T) {
	t.Parallel()
	_, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil) // a verified instance, and a pooled connection to it
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	r := s.call(ctx, "run_sweep", map[string]any{"query": "graph", "sources": []any{"arxiv"}})
	if !unavailable(r) {
		t.Fatalf("after the kill: %v %v", r.code(), r.payload)
	}
	msg, _ := r.payload["message"].(string)
	if msg == backend.MsgTransport || msg == backend.MsgWriteInterrupted || strings.Contains(msg, "unknown") {
		t.Fatalf("an unsent write is reported as possibly applied: %q", msg)
	}
	if msg != backend.MsgNotSent && !strings.Contains(msg, "not running") {
		t.Fatalf("message %q, want %q (or resmon is not running)", msg, backend.MsgNotSent)
	}
	if n := posts(sim, "/api/search/sweep"); n != 0 {
		t.Fatalf("%d sweeps reached the killed backend", n)
	}
}
