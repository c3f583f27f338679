package e2e

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// 50 harness sessions (50 shim processes) each keep calling, reads and a write, while the
// backend restarts twice (same port, then a new one). Every answer is a success or a
// documented error, every success names an instance the simulator really ran and agrees
// with the request the simulator recorded, and no write was replayed.
func TestFault50SessionsDuringRestart(t *testing.T) {
	t.Parallel()
	const sessions, rounds = 50, 6
	w := newWorld(t)
	w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 150*time.Second)
	minted := map[string]bool{sim.RuntimeID(): true}

	ss := make([]*session, sessions)
	for i := range ss {
		ss[i] = w.connect(ctx, simEnv(sim)...)
	}
	var (
		mu       sync.Mutex
		codes    = map[string]int{}
		healthOK []string
		writes   int
		wrote    int
	)
	var wg sync.WaitGroup
	startRestarts := make(chan struct{})
	for i, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if i == 0 && r == 1 {
					close(startRestarts)
				}
				h := s.call(ctx, "health", nil)
				q := s.call(ctx, "search_corpus", map[string]any{"query": "graph", "limit": 3})
				var wr result
				doWrite := r == rounds/2
				if doWrite {
					wr = s.call(ctx, "run_routine", map[string]any{"routine_id": 1})
				}
				mu.Lock()
				for _, x := range []result{h, q} {
					codes[x.code()]++
				}
				if h.code() == "" {
					healthOK = append(healthOK, runtimeID(h.payload))
				}
				if doWrite {
					writes++
					codes["write:"+wr.code()]++
					if wr.code() == "" {
						wrote++
					}
				}
				mu.Unlock()
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	<-startRestarts
	w.restartSim(sim, resmonsim.RestartOptions{})
	second := sim.RuntimeID()
	minted[second] = true
	// Some calls land on the second instance before the next restart (unless every session
	// is done by then).
	testkit.WaitFor(t, time.Minute, func() bool {
		select {
		case <-finished:
			return true
		default:
		}
		for _, r := range sim.Requests() {
			if r.RuntimeID == second && r.Path != "/api/health" {
				return true
			}
		}
		return false
	}, "a call answered by the second instance")
	w.restartSim(sim, resmonsim.RestartOptions{NewPort: true})
	minted[sim.RuntimeID()] = true
	<-finished

	t.Logf("50 sessions × %d rounds across 2 restarts: outcomes %v", rounds, codes)
	for c := range codes {
		if c == "transport" || c == "write:transport" {
			t.Fatalf("a call got no answer at all: %v", codes)
		}
		if code := strings.TrimPrefix(c, "write:"); code != "" && !documented[code] {
			t.Fatalf("undocumented code %q", code)
		}
	}
	for _, rid := range healthOK {
		if !minted[rid] {
			t.Fatalf("a health answer names runtime id %q, which no instance had", rid)
		}
	}
	// Each write the simulator received was one tool call: never more POSTs than calls, and
	// every success was a POST the backend answered.
	answered := 0
	for _, r := range sim.Requests() {
		if r.Method == "POST" && r.Path == "/api/routines/1/run" && r.Status >= 200 && r.Status < 300 {
			answered++
		}
	}
	if got := posts(sim, "/api/routines/1/run"); got > writes || wrote > answered {
		t.Fatalf("%d write calls, %d POSTs received, %d answered, %d reported success: a write was replayed", writes, got, answered, wrote)
	}
	// After the storm every session is on the last instance.
	for _, s := range ss {
		r := s.eventually(ctx, 20*time.Second, "health", nil, ok, "the final instance")
		if runtimeID(r.payload) != sim.RuntimeID() {
			t.Fatalf("a session stayed on %s", runtimeID(r.payload))
		}
	}
}

// The daemon is SIGKILLed with sessions open: each shim starts a new daemon (the flock picks
// one of the two) and its session goes on there, its next call answered; the next shim finds
// that daemon serving at once. (restart_test.go counts the calls in flight at the kill.)
func TestFaultDaemonSIGKILL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 90*time.Second)
	a := w.connect(ctx, simEnv(sim)...) // autostarts the daemon
	b := w.connect(ctx, simEnv(sim)...)
	a.must(ctx, "health", nil)
	b.must(ctx, "health", nil)
	old := w.daemonPID()
	if old == 0 {
		t.Fatal("no daemon pid in the lock file")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitGone(old, testkit.WaitLimit) {
		t.Fatal("the killed daemon is still alive")
	}
	for _, s := range []*session{a, b} {
		if got := runtimeID(s.must(ctx, "health", nil)); got != sim.RuntimeID() {
			t.Fatalf("the session after its daemon was SIGKILLed: %s", got)
		}
		if got := s.stderr.String(); got != "" {
			t.Fatalf("shim stderr after the reconnect: %q", got)
		}
	}
	c := w.connect(ctx, simEnv(sim)...)
	if got := runtimeID(c.must(ctx, "health", nil)); got != sim.RuntimeID() {
		t.Fatalf("after the autostart: %s", got)
	}
	if now := w.daemonPID(); now == 0 || now == old {
		t.Fatalf("no new daemon (pid %d, old %d)", now, old)
	}
	if _, err := os.Stat(w.Socket); err != nil {
		t.Fatalf("socket: %v", err)
	}
}
