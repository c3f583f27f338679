package proxy

import (
	"context"
	"net"
	"sync"
	"time"
)

// Warm-connection defaults. The backend (uvicorn) closes a keep-alive connection after 5 s
// idle and our pool drops it after 4 s (see NewClient), so an agent's next call, usually
// seconds later, would pay a fresh TCP connect. A spare connection, dialed ahead and renewed
// well inside both limits, is handed to the pool instead.
const (
	// DefaultWarmRefresh is how old a spare may get before it is replaced: below the pool's
	// idle limit and uvicorn's 5 s (which, for a connection that never carried a request, is
	// no shorter; Go's server gives one its 10 s header timeout in the simulator).
	DefaultWarmRefresh = 3 * time.Second
	// DefaultWarmFor is how long after the last call a spare is still kept: long enough for a
	// person reading an answer between calls, short enough that an idle daemon stops touching
	// the backend (one connect every DefaultWarmRefresh meanwhile, never a request).
	DefaultWarmFor = 10 * time.Minute
)

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// warmDialer hands the pool a connection dialed ahead when it has one that is young and
// still open, and dials otherwise. It keeps at most one spare, only to the address the pool
// last dialed, and only while calls come (warmFor after the last one); close drops it for
// good, so no connection outlives the generation that made it.
type warmDialer struct {
	dial    dialFunc
	refresh time.Duration
	warmFor time.Duration

	mu       sync.Mutex
	closed   bool
	network  string
	addr     string
	spare    net.Conn
	born     time.Time // when spare was dialed
	lastUse  time.Time
	timer    *time.Timer
	dialing  bool
	handouts int // spares handed to the pool (tests)
}

func newWarmDialer(dial dialFunc, refresh, warmFor time.Duration) *warmDialer {
	return &warmDialer{dial: dial, refresh: refresh, warmFor: warmFor}
}

// DialContext is the pool's dialer.
func (w *warmDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	w.mu.Lock()
	w.network, w.addr = network, addr
	c := w.spare
	fresh := c != nil && time.Since(w.born) < w.refresh
	w.spare = nil
	if fresh {
		w.handouts++
	}
	w.mu.Unlock()
	if c != nil {
		if fresh && connOpen(c) {
			return c, nil
		}
		_ = c.Close() // too old to trust, or the backend closed it
	}
	return w.dial(ctx, network, addr)
}

// used notes a call; the first one after a quiet spell starts the renewal.
func (w *warmDialer) used() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.lastUse = time.Now()
	if w.timer == nil {
		w.timer = time.AfterFunc(w.refresh, w.renew)
	}
}

// renew replaces the spare while calls are recent, and lets it go when they are not.
func (w *warmDialer) renew() {
	w.mu.Lock()
	if w.closed || w.addr == "" || w.dialing {
		w.mu.Unlock()
		return
	}
	if time.Since(w.lastUse) > w.warmFor {
		old := w.spare
		w.spare, w.timer = nil, nil
		w.mu.Unlock()
		if old != nil {
			_ = old.Close()
		}
		return
	}
	w.dialing = true
	network, addr := w.network, w.addr
	// The old spare goes first, so renewing never holds two (the generation's bound counts one).
	old := w.spare
	w.spare = nil
	w.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), w.refresh)
	c, err := w.dial(ctx, network, addr)
	cancel()

	w.mu.Lock()
	w.dialing = false
	if w.closed {
		w.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
		return
	}
	if err == nil {
		w.spare, w.born = c, time.Now()
	} // else the backend went away; the next call dials and reports it
	w.timer.Reset(w.refresh)
	w.mu.Unlock()
}

// close drops the spare and stops renewing.
func (w *warmDialer) close() {
	w.mu.Lock()
	w.closed = true
	old := w.spare
	w.spare = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

// hasSpare reports whether a spare is ready (tests).
func (w *warmDialer) hasSpare() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.spare != nil
}
