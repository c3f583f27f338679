package backend

import (
	"context"
	"sync"
	"time"

	"github.com/resmongw/resmongw/discovery"
)

// Upstream defaults.
const (
	DefaultFirstCheckWait = 4 * time.Second
	DefaultRetryWait      = 3 * time.Second

	// firstCheckPoll bounds each wait for the first check, so a source whose first check does
	// not bump the generation is still noticed promptly.
	firstCheckPoll = 100 * time.Millisecond

	// restartGrace is how long a failed read still waits for a verified backend once the
	// re-check has found none. A restart on the same port removes and rewrites the port and
	// token files within milliseconds, so the watcher may report "not running" just before
	// the new instance appears; a crashed app never comes back within it, and its caller
	// should not wait longer than this for the error.
	restartGrace = 250 * time.Millisecond
)

// UpstreamOptions tunes an Upstream; nil means the defaults.
type UpstreamOptions struct {
	Client *ClientOptions
	// FirstCheckWait is how long a call waits for the watcher's very first check.
	FirstCheckWait time.Duration
	// RetryWait bounds how long a failed read waits for the watcher's re-check (and for a
	// verified generation after it) before giving up.
	RetryWait time.Duration
}

// Upstream is the API the tools use in the daemon: it follows a discovery.Source across
// backend generations (the hot swap), keeping one Client per generation.
type Upstream struct {
	src   discovery.Source
	opts  UpstreamOptions
	Turns // update_settings' per-group turns for this backend

	mu     sync.Mutex
	gen    uint64
	client *Client // for gen; nil when gen is unverified or no call has needed one yet
}

// NewUpstream returns an Upstream following src. It does no I/O.
func NewUpstream(src discovery.Source, opts *UpstreamOptions) *Upstream {
	var o UpstreamOptions
	if opts != nil {
		o = *opts
	}
	if o.FirstCheckWait <= 0 {
		o.FirstCheckWait = DefaultFirstCheckWait
	}
	if o.RetryWait <= 0 {
		o.RetryWait = DefaultRetryWait
	}
	return &Upstream{src: src, opts: o}
}

// Close drops the current generation's idle connections. Calls made afterwards still work
// (they open a fresh pool), so closing is safe while sessions wind down.
func (u *Upstream) Close() {
	u.mu.Lock()
	c := u.client
	u.client = nil
	u.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Call runs r on the current verified generation. A read whose generation vanished under it
// (transport error or 401) is retried once on the next verified generation. A write is never
// replayed: the one exception is a write the guard refused with 401, which proves the backend
// never ran it (resmon restarted on the same port and our token is the previous instance's),
// so it is sent once, for the first time as far as the backend is concerned, on the next
// verified generation. A call with an expected runtime id is never retried (contract v2.3: no
// hidden retry).
func (u *Upstream) Call(ctx context.Context, r *Request) (any, error) {
	st, terr := u.state(ctx)
	if terr != nil {
		return nil, terr
	}
	c := u.clientFor(st)
	noteGeneration(ctx, st.Generation, false)
	res, err := c.Call(ctx, r)
	te, ok := err.(*ToolError)
	if !ok || !te.BackendGone {
		return res, err
	}

	// The generation we called is gone: ask the watcher to look again now rather than at its
	// next poll, so the following call (or our retry) finds the new instance.
	u.src.Recheck()
	if r.ExpectedRuntimeID != "" {
		return nil, te
	}
	if r.Write && !tokenRefused(te) {
		return nil, writeFailed(te, c)
	}
	next, ok := u.waitNewer(ctx, st.Generation)
	if !ok {
		return nil, te
	}
	c = u.clientFor(next)
	noteGeneration(ctx, next.Generation, true)
	res, err = c.Call(ctx, r)
	if te, ok := err.(*ToolError); ok && te.BackendGone {
		u.src.Recheck() // once is all a call gets; the next call starts from a fresh check
		if r.Write {
			return nil, writeFailed(te, c)
		}
	}
	return res, err
}

// tokenRefused reports whether te is the guard's 401 (MapStatus): the token was refused
// before any handler ran, so the request did nothing.
func tokenRefused(te *ToolError) bool {
	return te.BackendGone && !te.Sent && te.Message == MsgTokenRefused
}

// writeFailed is the answer to a write whose generation went away under it (te.BackendGone):
// one that may have reached the backend has an unknown outcome; one that never did is said
// to have done nothing. Neither is sent again.
func writeFailed(te *ToolError, c *Client) *ToolError {
	if !te.Sent {
		// Never reached the backend (refused connection, or the guard's 401), so nothing was
		// done; the caller may try again, but we do not do it for them.
		return te
	}
	if te.Detail["reason"] == reasonReadTimeout {
		// The backend may still be working on it: say that, not "restarted".
		return writeTimedOut(te, c.opts.RequestTimeout)
	}
	return writeInterrupted(te)
}

func noteGeneration(ctx context.Context, gen uint64, retried bool) {
	updateCallInfo(ctx, func(ci *CallInfo) {
		ci.Generation = gen
		if retried {
			ci.Retried = true
		}
	})
}

// state returns a verified state or the backend_unavailable error for an unverified one,
// waiting (bounded) only for the very first check.
func (u *Upstream) state(ctx context.Context) (discovery.State, *ToolError) {
	st := u.src.Current()
	if st.Backend == nil && st.Unavailable == nil {
		wctx, cancel := context.WithTimeout(ctx, u.opts.FirstCheckWait)
		defer cancel()
		for st.Backend == nil && st.Unavailable == nil && wctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(wctx, firstCheckPoll)
			st = u.src.Wait(pctx, st.Generation)
			pcancel()
			if st.Backend == nil && st.Unavailable == nil {
				st = u.src.Current()
			}
		}
	}
	switch {
	case st.Backend != nil:
		return st, nil
	case st.Unavailable != nil && u.settled(ctx, &st):
		return st, nil
	case st.Unavailable != nil:
		u.dropBefore(st.Generation)
		return st, NewError(CodeBackendUnavailable, st.Unavailable.Message, st.Unavailable.Detail())
	case ctx.Err() != nil:
		return st, cancelledError("")
	default:
		return st, NewError(CodeBackendUnavailable, "resmon could not be checked yet; the gateway is still looking for it. Try again.",
			map[string]any{"tried": []string{}})
	}
}

// settled asks a watcher that can (discovery.Watcher.Settle) for a pass that begins after
// this call arrived before an unavailable answer is given: a call arriving just after resmon
// rewrote its files must not be answered from the moment they were absent. It reports
// whether that pass found a backend (and then *st is it).
func (u *Upstream) settled(ctx context.Context, st *discovery.State) bool {
	s, ok := u.src.(interface {
		Settle(context.Context) discovery.State
	})
	if !ok {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, u.opts.FirstCheckWait)
	defer cancel()
	next := s.Settle(sctx)
	if next.Backend == nil {
		if next.Unavailable != nil {
			*st = next
		}
		return false
	}
	*st = next
	return true
}

// waitNewer waits for the generation that follows gen (the one our Recheck produces) and
// returns it when it is verified. When it is not (the re-check found the app gone: killed,
// its files left behind), it waits only restartGrace more for a verified one, so a read on a
// crashed backend fails at once rather than after RetryWait: while no backend is verified,
// calls answer backend_unavailable without delay. RetryWait and ctx bound the whole wait.
func (u *Upstream) waitNewer(ctx context.Context, gen uint64) (discovery.State, bool) {
	wctx, cancel := context.WithTimeout(ctx, u.opts.RetryWait)
	defer cancel()
	st := u.src.Wait(wctx, gen)
	if st.Generation <= gen || st.Backend != nil {
		return st, st.Generation > gen
	}
	gctx, gcancel := context.WithTimeout(wctx, restartGrace)
	defer gcancel()
	for {
		next := u.src.Wait(gctx, st.Generation)
		if next.Generation > st.Generation && next.Backend != nil {
			return next, true
		}
		if gctx.Err() != nil {
			return next, false
		}
		st = next
	}
}

// clientFor returns the client of st's generation, creating it on first use and closing the
// previous generation's idle connections when the generation moves on.
func (u *Upstream) clientFor(st discovery.State) *Client {
	u.mu.Lock()
	if u.client != nil && st.Generation <= u.gen {
		// Same generation, or st is a stale read racing a newer swap: the newer client wins.
		c := u.client
		u.mu.Unlock()
		return c
	}
	old := u.client
	c := NewClient(st.Backend, u.opts.Client)
	if st.Generation >= u.gen {
		u.client, u.gen = c, st.Generation
	} else {
		// A stale state after the backend went away: serve this one call, keep nothing idle.
		c.closed.Store(true)
	}
	u.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return c
}

// dropBefore releases the client of any generation older than gen (the backend went away).
func (u *Upstream) dropBefore(gen uint64) {
	u.mu.Lock()
	var old *Client
	if u.client != nil && u.gen < gen {
		old, u.client, u.gen = u.client, nil, gen
	}
	u.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Turns holds one single-slot semaphore per key (update_settings takes one per settings
// group). It is embedded in the Upstream (the daemon's API for one backend), so the turns
// belong to one backend: a slow instance never holds up another's settings, and the turns go
// when their backend does (nothing global keeps a closed upstream reachable).
type Turns struct {
	mu    sync.Mutex
	byKey map[string]chan struct{}
}

// Turn is key's semaphore: a caller holds the turn while it sends one into the channel.
func (s *Turns) Turn(key string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = make(map[string]chan struct{})
	}
	turn, ok := s.byKey[key]
	if !ok {
		turn = make(chan struct{}, 1)
		s.byKey[key] = turn
	}
	return turn
}
