package daemon_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// B2: a session whose RESMON_PORT the port parser refuses ("+N", "000N") never shares a
// target with one naming the valid port N, whichever connects first: the bad one is told its
// value is not a port, the good one reaches the backend.
func TestBadAndGoodPortNeverShareATarget(t *testing.T) {
	t.Parallel()
	for _, badFirst := range []bool{true, false} {
		t.Run("badFirst="+strconv.FormatBool(badFirst), func(t *testing.T) {
			w, sim, ctx := servedWorld(t)
			good := strconv.Itoa(sim.Port())
			for _, bad := range []string{"+" + good, "000" + good} {
				env := func(port string) []string { return append(simEnv(sim), "RESMON_PORT="+port) }
				checkBad := func() {
					s := w.connect(ctx, "2025-11-25", env(bad)...)
					r := call(ctx, t, s.cs, "health", nil)
					msg, _ := r.payload["message"].(string)
					if !r.isError || !strings.Contains(msg, "not a port") {
						t.Errorf("RESMON_PORT=%q: health = %v, want the not-a-port error", bad, r.payload)
					}
				}
				checkGood := func() {
					s := w.connect(ctx, "2025-11-25", env(good)...)
					if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
						t.Errorf("RESMON_PORT=%s reached %s, want %s", good, got, sim.RuntimeID())
					}
				}
				if badFirst {
					checkBad()
					checkGood()
				} else {
					checkGood()
					checkBad()
				}
			}
		})
	}
}

// Two harnesses pointing at two resmon instances each reach their own backend through one
// daemon.
func TestTwoTargets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	simA, simB := startSim(t), startSim(t)
	ctx := testCtx(t)
	a := w.connect(ctx, "2025-11-25", simEnv(simA)...)
	b := w.connect(ctx, "2025-11-25", simEnv(simB)...)
	for i := 0; i < 3; i++ {
		if got := healthRuntimeID(ctx, t, a.cs); got != simA.RuntimeID() {
			t.Fatalf("session A reached %s, want %s (B is %s)", got, simA.RuntimeID(), simB.RuntimeID())
		}
		if got := healthRuntimeID(ctx, t, b.cs); got != simB.RuntimeID() {
			t.Fatalf("session B reached %s, want %s (A is %s)", got, simB.RuntimeID(), simA.RuntimeID())
		}
	}
	out, code := w.runStatus(ctx, simEnv(simA), "--json")
	if code != 0 {
		t.Fatalf("status exit %d with both backends up:\n%s", code, out)
	}
	st := decodeStatus(t, out)
	if len(st.Targets) != 2 || len(st.Sessions) != 2 {
		t.Fatalf("status: %d targets, %d sessions; want 2 and 2", len(st.Targets), len(st.Sessions))
	}
	var rids []string
	for _, tg := range st.Targets {
		if tg.Sessions != 1 || tg.State.Backend == nil {
			t.Fatalf("target %s: %d sessions, backend %v", tg.Key, tg.Sessions, tg.State.Backend)
		}
		rids = append(rids, tg.State.Backend.RuntimeID())
	}
	if !slices.Contains(rids, simA.RuntimeID()) || !slices.Contains(rids, simB.RuntimeID()) {
		t.Fatalf("status runtime ids %v, want both %s and %s", rids, simA.RuntimeID(), simB.RuntimeID())
	}
	if !st.Targets[0].Caller || st.Targets[0].State.Backend.RuntimeID() != simA.RuntimeID() {
		t.Fatalf("the caller's target should come first and be A's")
	}
}
