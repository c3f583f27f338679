package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
)

// target is everything shared by the sessions whose harness environment names the same resmon
// instance: one watcher (so one set of inotify watches and probes), one upstream (so one HTTP
// transport per backend generation), one MCP server and one set of call stats. Sessions of
// different targets never share any of it, so each sees only its own corpus.
type target struct {
	key      string
	env      discovery.Target
	watcher  *discovery.Watcher
	upstream *backend.Upstream
	server   *mcp.Server
	stats    *callStats
	created  time.Time

	refs      int         // sessions (and status requests) using it; guarded by targets.mu
	idle      *time.Timer // pending close after the last session left; guarded by targets.mu
	idleSince time.Time   // when refs last fell to 0; guarded by targets.mu

	closeHook func() // tests: sees close
}

// DefaultMaxTargets is how many distinct targets a daemon keeps by default. A person runs one
// resmon, or a few with their own state directories; each target costs a goroutine, its
// directories in the shared file watch, a connection pool and an MCP server, so the bound
// keeps a flood of distinct environments (1,202 were seen) from costing without limit.
const DefaultMaxTargets = 64

// errShuttingDown is acquire's refusal once the daemon is stopping; the shim knows the words
// (shim.shuttingDown) and reconnects to the next daemon.
var errShuttingDown = errors.New("the daemon is shutting down")

// tooManyTargets is acquire's refusal when every one of the max targets has a session.
type tooManyTargets struct{ max int }

func (e tooManyTargets) Error() string {
	return fmt.Sprintf("this daemon already serves %d resmon instances (distinct RESMON_* environments), "+
		"each with a session open, which is its limit; end the sessions of one you no longer use, "+
		"or start the daemon with a higher 'resmongw serve --max-targets'", e.max)
}

// targets is the registry of live targets, keyed by Target.Key().
type targets struct {
	mu      sync.Mutex
	m       map[string]*target
	closed  bool
	idleTTL time.Duration // how long a target outlives its last session; 0 closes at once
	// max bounds len(m). A new target past it first closes the target idle the longest (no
	// session, kept only for idleTTL); with none idle it is refused.
	max  int
	make func(key string, env discovery.Target) *target
	log  *zap.Logger
}

// acquire returns the target for env, creating it on first use, and takes a reference. It
// fails once the registry is closed (errShuttingDown) or when a new target would pass max
// and no target is idle (tooManyTargets).
func (ts *targets) acquire(env discovery.Target) (*target, error) {
	key := env.Key()
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return nil, errShuttingDown
	}
	t := ts.m[key]
	var evicted *target
	if t == nil {
		if ts.max > 0 && len(ts.m) >= ts.max {
			if evicted = ts.longestIdleLocked(); evicted == nil {
				ts.mu.Unlock()
				return nil, tooManyTargets{ts.max}
			}
			evicted.idle.Stop()
			delete(ts.m, evicted.key)
		}
		t = ts.make(key, env)
		ts.m[key] = t
	}
	if t.idle != nil {
		t.idle.Stop()
		t.idle = nil
	}
	t.refs++
	ts.mu.Unlock()
	if evicted != nil {
		ts.log.Info("target closed to make room", zap.String("target", evicted.key),
			zap.Duration("idle_for", time.Since(evicted.idleSince)), zap.String("for", key))
		evicted.close()
	}
	return t, nil
}

// longestIdleLocked is the target without a session that has been so the longest, or nil.
func (ts *targets) longestIdleLocked() *target {
	var oldest *target
	for _, t := range ts.m {
		if t.refs == 0 && t.idle != nil && (oldest == nil || t.idleSince.Before(oldest.idleSince)) {
			oldest = t
		}
	}
	return oldest
}

// release drops a reference. A target nobody uses is closed after idleTTL: keeping it a while
// lets a harness that restarts its server (or a status call followed by a session) reuse the
// verified backend instead of probing again, and closing it eventually frees the inotify
// watches of instances the user no longer runs.
func (ts *targets) release(t *target) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.refs--
	if t.refs > 0 || ts.closed {
		return
	}
	t.idleSince = time.Now()
	t.idle = time.AfterFunc(ts.idleTTL, func() {
		ts.mu.Lock()
		if t.refs > 0 || ts.m[t.key] != t {
			ts.mu.Unlock()
			return
		}
		delete(ts.m, t.key)
		ts.mu.Unlock()
		ts.log.Info("target idle, closed", zap.String("target", t.key))
		t.close()
	})
}

// list returns the live targets.
func (ts *targets) list() []*target {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]*target, 0, len(ts.m))
	for _, t := range ts.m {
		out = append(out, t)
	}
	return out
}

// closeAll closes every target; later acquires get nil.
func (ts *targets) closeAll() {
	ts.mu.Lock()
	ts.closed = true
	all := ts.m
	ts.m = map[string]*target{}
	for _, t := range all {
		if t.idle != nil {
			t.idle.Stop()
		}
	}
	ts.mu.Unlock()
	for _, t := range all {
		t.close()
	}
}

func (t *target) close() {
	if t.closeHook != nil {
		t.closeHook()
	}
	t.upstream.Close()
	_ = t.watcher.Close()
}

// settled waits (bounded by ctx) until the watcher has finished its first check, so status
// reports an answer rather than "checking".
func (t *target) settled(ctx context.Context) discovery.State {
	st := t.watcher.Current()
	for st.Backend == nil && st.Unavailable == nil && ctx.Err() == nil {
		st = t.watcher.Wait(ctx, st.Generation)
	}
	return st
}
