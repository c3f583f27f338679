package testkit

import (
	"context"
	"testing"
	"time"
)

// WaitLimit bounds a wait for an event that takes well under a second on an idle machine (a
// process listens or exits, a line reaches a log, a session closes). It is a deadline against
// a hang, never a timing: a loaded 2-core machine running -race children (load averages of
// 20 to 50 are seen when several suites share it) starves a process for many seconds, and a
// wait that ends with its event costs nothing extra for being generous.
const WaitLimit = 60 * time.Second

// Context is a context for one test that ends after limit (or with the test).
func Context(t testing.TB, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}

// Poll calls cond until it holds or ctx ends, and reports whether it held.
func Poll(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pollEvery):
		}
	}
}

// WaitFor polls cond for up to limit and fails the test, naming what it waited for, when
// cond never held.
func WaitFor(t testing.TB, limit time.Duration, cond func() bool, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if !Poll(ctx, cond) && !cond() {
		t.Fatalf("timed out after %v waiting for %s", limit, what)
	}
}
