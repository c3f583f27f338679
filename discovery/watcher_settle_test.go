package discovery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/scrub"
)

// Issue 15.3: a state published while resmon's files were absent (mid-restart) must not
// answer a call that arrives after the new files landed but before the debounced re-check.
// The debounce and poll are an hour here, so the window stays open until Settle closes it:
// no timing decides the outcome.
func TestSettleSeesFilesWrittenSinceTheLastPass(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	w := NewWatcher(stateTarget(dir), &WatchOptions{Debounce: time.Hour, Poll: time.Hour, Probe: testOpts(deadPort(t))})
	var passes atomic.Int32
	w.checkHook = func(discoveryResult, bool) { passes.Add(1) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st := w.Wait(ctx, 0)
	if st.Unavailable == nil || st.Unavailable.Reason != ReasonNoToken {
		t.Fatalf("first check: %+v", st)
	}

	writeInstance(t, dir, f) // resmon's new files land; the debounced check is an hour away
	if st := w.Current(); st.Backend != nil {
		t.Fatalf("the window did not open: %+v", st)
	}
	st = w.Settle(ctx)
	if st.Backend == nil || st.Backend.Port != f.Port {
		t.Fatalf("Settle answered from the stale view: %+v", st.Unavailable)
	}

	// Every Settle is a pass of its own; callers waiting at the same moment share one.
	before := passes.Load()
	if st := w.Settle(ctx); st.Backend == nil || passes.Load() != before+1 {
		t.Fatalf("Settle: %d passes, state %+v", passes.Load()-before, st.Unavailable)
	}
}

// The restart itself: the pass that sees resmon's files gone (and so names another port) is
// still finishing when the new files land. Settle must notice them: the fingerprint of the
// directory and port file is the one taken before that pass read them, not after.
func TestSettleSeesFilesThatLandedDuringThePass(t *testing.T) {
	a, b := newFakeBackend(t), newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, a)
	w := NewWatcher(stateTarget(dir), &WatchOptions{Debounce: time.Hour, Poll: time.Hour, Probe: testOpts(deadPort(t))})
	var landNext atomic.Bool
	w.passHook = func() {
		if landNext.CompareAndSwap(true, false) {
			writeInstance(t, dir, b) // the restarted backend's files, just after the pass read none
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st := w.Wait(ctx, 0); st.Backend == nil || st.Backend.Port != a.Port {
		t.Fatalf("first check: %+v", st.Unavailable)
	}
	// resmon stops: its files go.
	for _, p := range []string{filepath.Join(dir, PortFileName), TokenFile(dir, a.Port)} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	landNext.Store(true)
	if st := w.Settle(ctx); st.Backend != nil || st.Unavailable == nil {
		t.Fatalf("the pass with the files gone: %+v", st)
	}
	if st := w.Settle(ctx); st.Backend == nil || st.Backend.Port != b.Port {
		t.Fatalf("Settle missed the files that landed during the last pass: %+v", st.Unavailable)
	}
}

// Issue 10.5 at the watcher: while a backend is verified its token stays scrubbed, however
// many other tokens the process reads meanwhile.
func TestVerifiedTokenStaysScrubbed(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w := NewWatcher(stateTarget(dir), &WatchOptions{Debounce: time.Hour, Poll: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st := w.Wait(ctx, 0); st.Backend == nil {
		t.Fatalf("not verified: %+v", st.Unavailable)
	}
	for i := 0; i < 1000; i++ {
		scrub.Add(fmt.Sprintf("other_token_%040d", i))
	}
	if scrub.String("echo "+f.Token()) != "echo "+scrub.Placeholder {
		t.Fatal("the verified backend's token was evicted from the scrubber")
	}
}
