package bench

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

func TestParseGCLine(t *testing.T) {
	for _, c := range []struct {
		line      string
		end, live int64
		ok        bool
	}{
		{"gc 3 @0.003s 9%: 0.12+0.69+0.002 ms clock, 0.25+0.012/0.069/0.067+0.004 ms cpu, 3->6->3 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P", 6, 3, true},
		{"gc 12 @1.5s 2%: 0.1+1+0.01 ms clock, 0.2+0/1/0+0.02 ms cpu, 120->125->40 MB, 130 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)", 125, 40, true},
		{"gc 1 @0.000s 12%: ..., 4 MB goal, 0 MB stacks", 0, 0, false}, // no heap triple
		{"scvg: 0 MB released", 0, 0, false},
		{"resmongw: listening", 0, 0, false},
	} {
		end, live, ok := parseGCLine(c.line)
		if ok != c.ok || end != c.end || live != c.live {
			t.Errorf("parseGCLine(%q) = %d, %d, %v; want %d, %d, %v", c.line, end, live, ok, c.end, c.live, c.ok)
		}
	}
}

func gcLine(n int, start, end, live int64) string {
	return "gc " + strconv.Itoa(n) + " @0.1s 1%: 0.1+0.1+0.1 ms clock, 0.1+0.1/0.1/0.1+0.1 ms cpu, " +
		strconv.FormatInt(start, 10) + "->" + strconv.FormatInt(end, 10) + "->" + strconv.FormatInt(live, 10) + " MB, 8 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
}

// The trace sums B(n) − C(n−1) from the second cycle on, whatever pieces the lines come in,
// and keeps other lines aside.
func TestGCTraceAccumulates(t *testing.T) {
	g := NewGCTrace()
	stream := "daemon: starting\n" + gcLine(1, 4, 5, 1) + gcLine(2, 4, 6, 2) + gcLine(3, 7, 9, 3) + "tail without newline"
	for i := 0; i < len(stream); i += 7 { // odd-sized pieces split lines anywhere
		if _, err := g.Write([]byte(stream[i:min(i+7, len(stream))])); err != nil {
			t.Fatal(err)
		}
	}
	if s := g.Snapshot(); s.Cycles != 3 || s.AllocMB != (6-1)+(9-2) {
		t.Fatalf("snapshot = %+v, want 3 cycles and %d MB", s, (6-1)+(9-2))
	}
	if o := g.Other(); len(o) != 1 || o[0] != "daemon: starting" {
		t.Fatalf("other lines = %q", o)
	}
}

// The window counts only the calls between the first and the last cycle seen during a run.
func TestAllocWindow(t *testing.T) {
	w := newAllocWindow(GCSnapshot{Cycles: 10, AllocMB: 100})
	snaps := []GCSnapshot{{10, 100}, {10, 100}, {11, 104}, {11, 104}, {11, 104}, {12, 107}, {13, 111}, {13, 111}}
	for i, s := range snaps {
		w.after(i, s)
	}
	mb, calls, cycles := w.result()
	if mb != 111-104 || calls != 6-2 || cycles != 13-11 {
		t.Fatalf("window = %d MB over %d calls, %d cycles; want 7 MB, 4 calls, 2 cycles", mb, calls, cycles)
	}
	if mb, calls, _ := newAllocWindow(GCSnapshot{Cycles: 3}).result(); mb != 0 || calls != 0 {
		t.Fatalf("a window with no cycle = %d MB, %d calls", mb, calls)
	}
}

func TestWithGCTrace(t *testing.T) {
	if got := WithGCTrace([]string{"GOGC=400"}); strings.Join(got, " ") != "GOGC=400 GODEBUG=gctrace=1" {
		t.Errorf("without GODEBUG: %q", got)
	}
	if got := WithGCTrace([]string{"GODEBUG=madvdontneed=1", "X=1"}); strings.Join(got, " ") != "GODEBUG=madvdontneed=1,gctrace=1 X=1" {
		t.Errorf("with GODEBUG: %q", got)
	}
}

// allocChildHelper is this test binary run again to allocate the given MiB and exit: a real Go
// process whose allocations the runtime itself counts, to check the gctrace estimate against.
const allocChildHelper = "bench-alloc"

var sink, live []byte

// allocChild runs with GOGC=off, so its only cycles are the forced ones and each interval is
// large: the whole-MB truncation (under 1 MB per cycle) is then small next to it.
func allocChild(mib int) {
	runtime.GC() // the estimate starts at the end of the first cycle seen
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for round := range 3 {
		for range mib * 16 / 3 {
			sink = make([]byte, 64<<10)
		}
		live = make([]byte, (round+1)<<20+123<<10) // a live heap that changes between cycles
		runtime.GC()
	}
	runtime.ReadMemStats(&after)
	os.Stdout.WriteString(strconv.FormatUint(after.TotalAlloc-before.TotalAlloc, 10))
}

// The estimate from a real process's gctrace agrees with the runtime's own count of the
// bytes it allocated, to within the truncation of its whole-MB figures.
func TestGCTraceMatchesRuntime(t *testing.T) {
	const mib = 48
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := testkit.HelperCommand(ctx, allocChildHelper, strconv.Itoa(mib), "GODEBUG=gctrace=1", "GOGC=off")
	g := NewGCTrace()
	cmd.Stderr = g
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v (stderr %q)", err, g.Other())
	}
	truth, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("child printed %q", out)
	}
	s := g.Snapshot()
	if s.Cycles < 4 {
		t.Fatalf("%d GC cycles, want the child's 4 forced ones", s.Cycles)
	}
	est := s.AllocMB << 20
	t.Logf("gctrace estimate %d MiB over %d cycles; runtime TotalAlloc %.1f MiB", est>>20, s.Cycles, float64(truth)/(1<<20))
	// Each interval's figure is off by less than 1 MB; one more for what the runtime itself
	// allocated around the forced cycles.
	if bound := int64(s.Cycles) << 20; est < truth-bound || est > truth+bound {
		t.Fatalf("gctrace estimate %d MiB, runtime counted %.1f MiB", est>>20, float64(truth)/(1<<20))
	}
}
