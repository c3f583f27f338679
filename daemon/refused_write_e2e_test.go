package daemon_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 26.10: resmon restarts on the same port with a new token, and a write arrives before
// the daemon has seen the new files. The new instance's guard refuses the old token with 401,
// which proves the write never ran; the daemon waits for the watcher's next verified
// generation and sends it once there. The harness gets the write's answer, and the backend
// ran it exactly once.
//
// The simulator's LateFiles restart makes the window certain: the new instance writes its
// files only as its first request arrives. Should the watcher's safety poll be that first
// request (its probe, not our write), the write meets the new files and no 401 at all; the
// round is then tried again, and the test fails only if no round saw a refused write.
func TestWriteRefusedAfterSameportRestartIsSentOnceOnTheNewInstance(t *testing.T) {
	t.Parallel()
	// The wait for the restarted instance's verification must not be what fails on a loaded
	// machine: the retry wait is set far above it.
	w := newWorld(t)
	sim := startSim(t)
	w.startDaemon("--retry-wait", "1m")
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	healthRuntimeID(ctx, t, s.cs)
	for round := 0; round < 3; round++ {
		port := sim.Port()
		if err := sim.Restart(resmonsim.RestartOptions{LateFiles: true}); err != nil {
			t.Fatal(err)
		}
		if sim.Port() != port {
			t.Fatalf("restart moved the port %d -> %d", port, sim.Port())
		}
		sim.ResetRequests()
		name := fmt.Sprintf("after-restart-%d", round)
		r := call(ctx, t, s.cs, "create_routine", map[string]any{"name": name, "keywords": []any{"graph"},
			"sources": []any{"arxiv"}, "schedule": "0 8 * * *"})
		if r.isError {
			t.Fatalf("round %d: the write after a same-port restart failed: %v", round, r.payload)
		}
		refused, ran := 0, 0
		for _, q := range sim.Requests() {
			var body struct{ Name string }
			if q.Method != "POST" || q.Path != "/api/routines" || json.Unmarshal(q.Body, &body) != nil || body.Name != name {
				continue
			}
			switch {
			case q.Status == 401 && !q.AuthOK:
				refused++
			case q.AuthOK && q.Status/100 == 2:
				ran++
			default:
				t.Errorf("round %d: unexpected write request: status %d, token accepted %v", round, q.Status, q.AuthOK)
			}
		}
		if ran != 1 || refused > 1 {
			t.Fatalf("round %d: the backend ran the write %d times and refused it %d times; want once and at most once", round, ran, refused)
		}
		if refused == 1 {
			return // the case the issue is about, seen and handled
		}
		t.Logf("round %d: the watcher's poll reached the new instance first; trying again", round)
	}
	t.Fatal("no round sent the write to the restarted instance with the old token")
}
