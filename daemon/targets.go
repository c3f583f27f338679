package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/proxy"
)

// target is everything shared by the sessions whose harness environment names the same resmon
// instance: one watcher (so one set of inotify watches and probes), one upstream (so one HTTP
// transport per backend generation), one MCP server and one set of call stats. Sessions of
// different targets never share any of it, so each sees only its own corpus.
type target struct {
	key      string
	env      discovery.Target
	watcher  *discovery.Watcher
	upstream *proxy.Upstream
	server   *mcp.Server
	stats    *callStats
	created  time.Time

	refs int         // sessions (and status requests) using it; guarded by targets.mu
	idle *time.Timer // pending close after the last session left; guarded by targets.mu
}

// targets is the registry of live targets, keyed by Target.Key().
type targets struct {
	mu      sync.Mutex
	m       map[string]*target
	closed  bool
	idleTTL time.Duration // how long a target outlives its last session; 0 closes at once
	make    func(key string, env discovery.Target) *target
	log     *zap.Logger
}

// acquire returns the target for env, creating it on first use, and takes a reference.
// It returns nil once the registry is closed (the daemon is shutting down).
func (ts *targets) acquire(env discovery.Target) *target {
	key := env.Key()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil
	}
	t := ts.m[key]
	if t == nil {
		t = ts.make(key, env)
		ts.m[key] = t
	}
	if t.idle != nil {
		t.idle.Stop()
		t.idle = nil
	}
	t.refs++
	return t
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
