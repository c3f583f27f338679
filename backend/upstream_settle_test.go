package backend_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 15.3's flake, at the call: resmon restarts (its files vanish, the watcher publishes
// "no token", the new files land) and a call made before the watcher's debounced re-check is
// answered by the new backend, not with the intermediate "no token". The watcher's debounce
// is an hour, so the window cannot close by itself while the call is made.
func TestCallAfterRestartIsNotAnsweredFromTheIntermediateView(t *testing.T) {
	dir := t.TempDir()
	sim, err := resmonsim.Start(resmonsim.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The files are absent when the watcher first looks, as in the middle of a restart.
	portFile := filepath.Join(dir, discovery.PortFileName)
	saved, err := os.ReadFile(portFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(portFile); err != nil {
		t.Fatal(err)
	}
	w := discovery.NewWatcher(discovery.Target{StateDir: dir, Port: "", Home: "/nonexistent"},
		&discovery.WatchOptions{Debounce: time.Hour, Poll: time.Hour})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st := w.Wait(ctx, 0); st.Backend != nil {
		t.Fatalf("the watcher saw the port file: %+v", st)
	}
	if err := os.WriteFile(portFile, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	u := backend.NewUpstream(w, backendtest.Patient)
	defer u.Close()
	if _, err := u.Call(ctx, &backend.Request{Method: "GET", Path: "/api/health"}); err != nil {
		t.Fatalf("a call after the files landed was answered from the stale view: %v", err)
	}
}
