package bench

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
)

// GCTrace reads a Go process's GODEBUG=gctrace=1 output (one line per GC cycle on its stderr)
// and keeps a running count of cycles and of the bytes the process allocated between them.
// It is how the benchmarks learn a separate process's allocations per call without any hook
// in that process: the runtime reports, per cycle, the heap at the end of the cycle (B) and
// the live heap it marked (C), and everything allocated from the end of cycle n-1 to the end
// of cycle n is B(n) − C(n−1). The figures are whole MB, so one interval is only good to
// about ±1 MB; summed over the dozens of cycles a few hundred calls cause, the truncation
// errors mostly cancel (each term is a difference of two truncated numbers).
//
// Writes may come in any pieces; GCTrace assembles lines. Other stderr lines are kept (the
// last few) for diagnostics.
type GCTrace struct {
	mu       sync.Mutex
	partial  []byte
	cycles   int
	allocMB  int64 // sum of B(n) − C(n−1) over the cycles after the first seen
	lastLive int64 // C of the latest cycle, -1 before the first
	other    []string
}

// NewGCTrace returns an empty trace.
func NewGCTrace() *GCTrace { return &GCTrace{lastLive: -1} }

// GCSnapshot is the trace at one moment.
type GCSnapshot struct {
	Cycles int
	// AllocMB is the MB allocated from the end of the first cycle seen to the end of the
	// latest (0 until two cycles were seen).
	AllocMB int64
}

// Snapshot returns the counts so far.
func (g *GCTrace) Snapshot() GCSnapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GCSnapshot{Cycles: g.cycles, AllocMB: g.allocMB}
}

// Other returns the last non-gctrace lines written (at most 20).
func (g *GCTrace) Other() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.other...)
}

// Write implements io.Writer for a process's stderr.
func (g *GCTrace) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.partial = append(g.partial, p...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		g.line(string(g.partial[:i]))
		g.partial = g.partial[i+1:]
	}
	if len(g.partial) == 0 {
		g.partial = nil // let the backing array go once a burst is consumed
	}
	return len(p), nil
}

func (g *GCTrace) line(s string) {
	end, live, ok := parseGCLine(s)
	if !ok {
		if g.other = append(g.other, s); len(g.other) > 20 {
			g.other = g.other[1:]
		}
		return
	}
	g.cycles++
	if g.lastLive >= 0 {
		g.allocMB += end - g.lastLive
	}
	g.lastLive = live
}

// parseGCLine takes the heap at the end of the cycle and the live heap from a gctrace line:
//
//	gc 3 @0.003s 9%: 0.12+0.69+0.002 ms clock, …, 3->6->3 MB, 4 MB goal, …
func parseGCLine(s string) (end, live int64, ok bool) {
	if !strings.HasPrefix(s, "gc ") {
		return 0, 0, false
	}
	for _, f := range strings.Split(s, ", ") {
		heap, isHeap := strings.CutSuffix(f, " MB")
		if !isHeap {
			continue
		}
		parts := strings.Split(heap, "->")
		if len(parts) != 3 {
			continue
		}
		var v [3]int64
		for i, p := range parts {
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil || n < 0 {
				return 0, 0, false
			}
			v[i] = n
		}
		return v[1], v[2], true
	}
	return 0, 0, false
}

// allocWindow turns the snapshots taken after each call of a run into the allocation of the
// calls between the first and the last GC cycle that ended during the run: only whole
// inter-cycle intervals count, so the figure does not depend on where the run began or ended
// relative to the process's GC cycles.
type allocWindow struct {
	start       GCSnapshot
	first, last GCSnapshot
	firstCall   int
	lastCall    int
	seen        bool
}

func newAllocWindow(start GCSnapshot) *allocWindow { return &allocWindow{start: start} }

// after records the snapshot taken after call number i (0-based) of the run.
func (w *allocWindow) after(i int, s GCSnapshot) {
	if s.Cycles == w.start.Cycles {
		return
	}
	if !w.seen {
		w.first, w.firstCall, w.seen = s, i, true
	}
	if s.Cycles != w.last.Cycles {
		w.last, w.lastCall = s, i
	}
}

// result is the MB allocated over the window, the calls it spans and the cycles in it.
func (w *allocWindow) result() (allocMB int64, calls, cycles int) {
	if !w.seen {
		return 0, 0, 0
	}
	return w.last.AllocMB - w.first.AllocMB, w.lastCall - w.firstCall, w.last.Cycles - w.first.Cycles
}

// WithGCTrace returns env with gctrace=1 added to GODEBUG (kept with any other GODEBUG
// settings already there), so a World's daemon reports its GC cycles.
func WithGCTrace(env []string) []string {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			found = true
			if v != "" {
				v += ","
			}
			kv = "GODEBUG=" + v + "gctrace=1"
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "GODEBUG=gctrace=1")
	}
	return out
}
