package proxy

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"
)

// The warm spare: a call after a pause finds a connection ready instead of dialing one, and
// the spare never outlives its generation or carries a write.

// connects counts the TCP connects a call made (httptrace, composed with the client's own).
func connects(ctx context.Context) (context.Context, *atomic.Int64) {
	var n atomic.Int64
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectStart: func(string, string) { n.Add(1) },
	}), &n
}

// noTimer keeps the renewal timer from firing during a test that renews by hand.
var noTimer = &ClientOptions{WarmRefresh: time.Hour}

func TestACallAfterTheIdleConnectionWasDroppedUsesTheSpare(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), noTimer)
	defer c.Close()
	ctx := coreCtx(t)
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	c.warm.renew()     // what the timer does DefaultWarmRefresh after a call
	c.closeIdle(false) // what the pool does once the connection idled 4 s
	if !c.warm.hasSpare() {
		t.Fatal("no spare after renewing")
	}
	tctx, n := connects(ctx)
	if _, err := c.Call(tctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 0 {
		t.Fatalf("the call after the pause connected %d times; the spare was not used", n.Load())
	}
	if f.conns.Load() != 2 {
		t.Fatalf("%d connections: want the first one and the spare", f.conns.Load())
	}
}

func TestASpareTheBackendClosedIsNotUsed(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), noTimer)
	defer c.Close()
	ctx := coreCtx(t)
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	c.warm.renew()
	c.closeIdle(false)
	coreEventually(t, func() bool { return f.conns.Load() == 2 }) // the server accepted the spare
	f.srv.CloseClientConnections()                                // the backend restarted: the spare's peer is gone
	coreEventually(t, func() bool { return f.closed.Load() == f.conns.Load() })
	tctx, n := connects(ctx)
	if _, err := c.Call(tctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatalf("a closed spare failed the call: %v", err)
	}
	if n.Load() != 1 {
		t.Fatalf("%d connects; want one fresh connection instead of the closed spare", n.Load())
	}
}

func TestWritesNeverUseTheSpare(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), noTimer)
	defer c.Close()
	ctx := coreCtx(t)
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	c.warm.renew()
	tctx, n := connects(ctx)
	if _, err := c.Call(tctx, &Request{Method: "POST", Path: "/api/routines", Body: map[string]any{}, Write: true}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 || !c.warm.hasSpare() {
		t.Fatalf("write: %d connects, spare kept %v; want a connection of its own and the spare untouched", n.Load(), c.warm.hasSpare())
	}
}

func TestTheSpareIsRenewedWhileCallsComeAndDroppedAfter(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), &ClientOptions{WarmRefresh: 20 * time.Millisecond, WarmFor: 200 * time.Millisecond})
	defer c.Close()
	ctx := coreCtx(t)
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	coreEventually(t, c.warm.hasSpare)
	// No call for WarmFor: the spare goes, and with the pool's connection dropped too the
	// backend holds nothing of ours.
	c.closeIdle(false)
	coreEventually(t, func() bool {
		c.warm.mu.Lock()
		stopped := c.warm.timer == nil
		c.warm.mu.Unlock()
		return stopped && !c.warm.hasSpare() && f.closed.Load() == f.conns.Load()
	})
}

func TestClosingAGenerationClosesItsSpare(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), &ClientOptions{WarmRefresh: 10 * time.Millisecond})
	ctx := coreCtx(t)
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	coreEventually(t, c.warm.hasSpare)
	c.Close()
	coreEventually(t, func() bool { return f.closed.Load() == f.conns.Load() })
	c.warm.renew() // a timer that fired just before Close finds the client closed
	if c.warm.hasSpare() {
		t.Fatal("a closed generation dialed a spare")
	}
	// A closed client still serves a call (Upstream relies on it), and keeps nothing after.
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	coreEventually(t, func() bool { return f.closed.Load() == f.conns.Load() })
}
