package e2e

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 11.3: RESMON_PORT pins. With it naming a port nothing answers on, and the state
// directory's port file naming a live backend, every call is backend_unavailable naming the
// pinned port, and the port file's backend never hears from the gateway.
func TestPinnedPortNeverFallsThrough(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx := testkit.Context(t, 60*time.Second)
	s := w.connect(ctx, append(simEnv(sim), "RESMON_PORT="+strconv.Itoa(dead))...)
	sim.ResetRequests()
	for tool, args := range map[string]map[string]any{"health": {}, "search_corpus": {"query": "graph"}} {
		r := s.call(ctx, tool, args)
		if r.code() != backend.CodeBackendUnavailable || !strings.Contains(message(r), strconv.Itoa(dead)) {
			t.Fatalf("%s with RESMON_PORT=%d: %v %v, want backend_unavailable naming it", tool, dead, r.code(), r.payload)
		}
	}
	if n := len(sim.Requests()); n != 0 {
		t.Fatalf("the port file's backend got %d requests although RESMON_PORT pinned another port", n)
	}
}
