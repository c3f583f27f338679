package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// The world (a built binary, a simulator, a daemon process) is made only when a benchmark
// asks for it, so `go test ./...` never builds or starts anything here.
var (
	worldOnce sync.Once
	world     *World
	worldErr  error
	worldTmp  string
)

func TestMain(m *testing.M) {
	testkit.RunHelper(allocChildHelper, func(arg string) int { // TestGCTraceMatchesRuntime's child
		mib, _ := strconv.Atoi(arg)
		allocChild(mib)
		return 0
	})
	flag.Parse()
	code := m.Run()
	if world != nil {
		world.Close()
	}
	if worldTmp != "" {
		os.RemoveAll(worldTmp)
	}
	testkit.Exit(code)
}

func benchWorld(b *testing.B) *World {
	b.Helper()
	worldOnce.Do(func() {
		if worldTmp, worldErr = os.MkdirTemp("", "resmongw-bench-bin-"); worldErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		bin, err := testkit.Build(ctx, worldTmp, false)
		if err != nil {
			worldErr = err
			return
		}
		world, worldErr = NewWorld(bin, WithGCTrace(nil)...)
	})
	if worldErr != nil {
		b.Fatal(worldErr)
	}
	return world
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// reportLatency adds p50 and p99 (µs) to a benchmark's output.
func reportLatency(b *testing.B, lat []time.Duration) {
	s := Summarize(lat)
	b.ReportMetric(float64(s.P50)/float64(time.Microsecond), "p50-µs")
	b.ReportMetric(float64(s.P99)/float64(time.Microsecond), "p99-µs")
}

// BenchmarkCall makes the health call seven ways; compare the sub-benchmarks' p50/p99 to the
// direct baseline. (benchtable interleaves the modes; this runs them one after the other.)
// The daemon modes also report the daemon's allocations per call (daemon-B/op, from its
// gctrace), since allocs/op counts only this process.
func BenchmarkCall(b *testing.B) {
	w := benchWorld(b)
	ctx := benchCtx(b)
	session := func(open func() (*Session, error)) func(b *testing.B) func(context.Context) error {
		return func(b *testing.B) func(context.Context) error {
			s, err := open()
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(s.Close)
			return func(ctx context.Context) error { _, err := CallHealth(ctx, s.CS); return err }
		}
	}
	raw := func(open func() (*RawSession, error)) func(b *testing.B) func(context.Context) error {
		return func(b *testing.B) func(context.Context) error {
			s, err := open()
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(s.Close)
			return func(context.Context) error { _, err := s.Health(); return err }
		}
	}
	shimEnv := w.Env(w.Socket, "RESMONGW_NO_AUTOSTART=1")
	cases := []struct {
		name   string
		prep   func(b *testing.B) func(context.Context) error
		daemon bool
	}{
		{"direct", func(b *testing.B) func(context.Context) error {
			d := NewDirectHTTP(w.Ext)
			b.Cleanup(d.Close)
			return d.Call
		}, false},
		{"stub", session(func() (*Session, error) { return StubSession(ctx) }), false},
		{"inproc", session(func() (*Session, error) { return InProcSession(ctx, w.Ext.StateDir) }), false},
		{"socket", session(func() (*Session, error) { return w.SocketSession(ctx) }), true},
		{"shim", session(func() (*Session, error) { return w.ShimSession(ctx, shimEnv) }), true},
		{"socket-raw", raw(func() (*RawSession, error) { return w.RawSocketSession(ctx) }), true},
		{"shim-raw", raw(func() (*RawSession, error) { return w.RawShimSession(ctx, shimEnv) }), true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			call := c.prep(b)
			for range 50 { // warm connections and caches
				if err := call(ctx); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			win := newAllocWindow(w.GC.Snapshot())
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := call(ctx); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				if c.daemon {
					win.after(i, w.GC.Snapshot())
				}
			}
			b.StopTimer()
			reportLatency(b, lat)
			if mb, calls, _ := win.result(); calls > 0 {
				b.ReportMetric(float64(mb<<20)/float64(calls), "daemon-B/op")
			}
		})
	}
}

// BenchmarkColdStart is one `resmongw stdio` launch to the initialize result per op.
func BenchmarkColdStart(b *testing.B) {
	w := benchWorld(b)
	ctx := benchCtx(b)
	b.Run("daemon-running", func(b *testing.B) {
		s, err := MeasureColdStart(ctx, w, b.N)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.P50)/float64(time.Millisecond), "p50-ms")
	})
	b.Run("autostart", func(b *testing.B) {
		s, err := MeasureAutostart(ctx, w, b.N)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.P50)/float64(time.Millisecond), "p50-ms")
	})
}

// BenchmarkSwap is one backend restart to the first successful call on it per op.
func BenchmarkSwap(b *testing.B) {
	w := benchWorld(b)
	ctx := benchCtx(b)
	for _, newPort := range []bool{false, true} {
		b.Run(fmt.Sprintf("new-port=%v", newPort), func(b *testing.B) {
			s, err := MeasureSwap(ctx, w, b.N, newPort)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(s.P50)/float64(time.Millisecond), "p50-ms")
			b.ReportMetric(float64(s.Max)/float64(time.Millisecond), "max-ms")
			b.ReportMetric(float64(s.FailedCalls), "failed-calls")
		})
	}
}

// BenchmarkScale runs each concurrency level once for one second per op; shims up to 100
// sessions, direct socket connections for 1000.
func BenchmarkScale(b *testing.B) {
	w := benchWorld(b)
	ctx := benchCtx(b)
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			for range b.N {
				r, err := MeasureScale(ctx, w, n, n <= 100, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.CallsPerSec, "calls/s")
				b.ReportMetric(float64(r.Latency.P99)/float64(time.Microsecond), "p99-µs")
				b.ReportMetric(float64(r.RSSIdle)/(1<<20), "daemon-idle-MiB")
				b.ReportMetric(float64(r.PerSession())/1024, "KiB/session")
				if r.ShimRSS > 0 {
					b.ReportMetric(float64(r.ShimRSS)/(1<<20), "shim-MiB")
				}
			}
		})
	}
}

// BenchmarkToolAnswer reports the bytes of each tool's default answer (no binary needed).
func BenchmarkToolAnswer(b *testing.B) {
	ctx := benchCtx(b)
	sizes, err := MeasureToolSizes(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range sizes {
		name := s.Tool
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(float64(s.Bytes), "bytes")
		})
	}
}
