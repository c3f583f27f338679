package discovery

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWatcherSwap measures the time from a restarted backend's files landing to the
// watcher publishing it as verified (the contract's target is well under 100 ms).
func BenchmarkWatcherSwap(b *testing.B) {
	f := newFakeBackend(b)
	dir := b.TempDir()
	writeInstance(b, dir, f)
	w := NewWatcher(stateTarget(dir), &WatchOptions{Poll: time.Hour, Probe: testOpts(deadPort(b))})
	if err := w.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := w.Wait(ctx, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f.restart()
		b.StartTimer()
		writeInstance(b, dir, f)
		for s.Backend == nil || s.Backend.Token.Reveal() != f.Token() {
			if ctx.Err() != nil {
				b.Fatal("timed out")
			}
			s = w.Wait(ctx, s.Generation)
		}
	}
}
