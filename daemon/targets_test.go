package daemon

import (
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
)

// newTestTargets is a registry of at most max targets whose targets do no I/O; closed
// records the keys of the targets it closed, in order.
func newTestTargets(max int, closed *[]string) *targets {
	return &targets{m: map[string]*target{}, idleTTL: time.Hour, max: max, log: zap.NewNop(),
		make: func(key string, env discovery.Target) *target {
			w := discovery.NewWatcher(env, nil) // never started
			return &target{key: key, env: env, watcher: w, upstream: backend.NewUpstream(w, nil), stats: newCallStats(),
				closeHook: func() { *closed = append(*closed, key) }}
		}}
}

func envN(i int) discovery.Target { return discovery.Target{Port: strconv.Itoa(9000 + i)} }

// Issue 26.2: distinct targets are capped. Idle targets (no session) make room first, the one
// idle the longest before the others; with every target in use, a new one is refused with a
// reason a person can act on, and an existing one is still served.
func TestTargetsCapEvictsIdleFirstThenRefuses(t *testing.T) {
	var closed []string
	ts := newTestTargets(3, &closed)
	defer ts.closeAll()
	var held []*target
	for i := 0; i < 3; i++ {
		tg, err := ts.acquire(envN(i))
		if err != nil {
			t.Fatalf("target %d: %v", i, err)
		}
		held = append(held, tg)
	}
	if _, err := ts.acquire(envN(3)); !errors.As(err, new(tooManyTargets)) ||
		!strings.Contains(err.Error(), "3 resmon instances") || !strings.Contains(err.Error(), "--max-targets") {
		t.Fatalf("a fourth target with three in use: %v", err)
	}
	if again, err := ts.acquire(envN(1)); err != nil || again != held[1] {
		t.Fatalf("an existing target at the cap: %v", err)
	} else {
		ts.release(again)
	}
	if len(closed) != 0 || len(ts.list()) != 3 {
		t.Fatalf("closed %v, %d live", closed, len(ts.list()))
	}

	// Targets 2 then 0 go idle: 2 has been idle longer, so it leaves first.
	ts.release(held[2])
	ts.release(held[0])
	if _, err := ts.acquire(envN(3)); err != nil {
		t.Fatalf("a new target with two idle: %v", err)
	}
	if _, err := ts.acquire(envN(4)); err != nil {
		t.Fatalf("a new target with one idle: %v", err)
	}
	if strings.Join(closed, ",") != envN(2).Key()+","+envN(0).Key() {
		t.Fatalf("closed %v, want the longest idle first: %s then %s", closed, envN(2).Key(), envN(0).Key())
	}
	if _, err := ts.acquire(envN(5)); !errors.As(err, new(tooManyTargets)) {
		t.Fatalf("a new target with none idle: %v", err)
	}
	if n := len(ts.list()); n != 3 {
		t.Fatalf("%d live targets, want the cap of 3", n)
	}
	ts.closeAll()
	if _, err := ts.acquire(envN(1)); !errors.Is(err, errShuttingDown) {
		t.Fatalf("after closeAll: %v", err)
	}
}

// Issue 26.2: what one target costs is bounded and small: one goroutine (its watcher's; the
// file watch is shared) and a few KiB of heap before any call (measured: about 18 KiB; the
// per-tool stats it gains with calls are bounded by maxTrackedTools and latencyWindow).
// Together with the cap this bounds the daemon whatever the number of environments.
func TestTargetCostIsBounded(t *testing.T) {
	d, cancel := newDaemon(filepath.Join(t.TempDir(), "s.sock"), "", zap.NewNop(), slog.New(slog.DiscardHandler), time.Hour, nil)
	defer cancel()
	const n = 100
	d.targets.max = n
	defer d.targets.closeAll()
	root := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	for i := 0; i < n; i++ {
		tg, err := d.targets.acquire(discovery.Target{StateDir: filepath.Join(root, strconv.Itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		tg.settled(t.Context()) // its first check done: the state a target keeps
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perHeap := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	perG := float64(runtime.NumGoroutine()-g0) / n
	t.Logf("per target: %d B of heap, %.2f goroutines", perHeap, perG)
	if perHeap > 64<<10 || perG > 1.05 {
		t.Errorf("a target costs %d B of heap and %.2f goroutines; want under 64 KiB and one", perHeap, perG)
	}
}
