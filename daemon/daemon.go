package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/proxy"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// Bounds.
const (
	preambleWait  = 5 * time.Second // a client must send its preamble this fast
	statusSettle  = discovery.ProbeTimeout + 2*time.Second
	closeSessions = 3 * time.Second // graceful session close at shutdown, then force
	forceWait     = 2 * time.Second
)

// daemon is one running `resmongw serve`.
type daemon struct {
	socket  string
	logFile string
	started time.Time
	log     *zap.Logger
	sdkLog  *slog.Logger
	ln      *net.UnixListener
	targets *targets
	// upstream configures every target's backend client (the request timeout); nil means
	// the defaults.
	upstream *proxy.UpstreamOptions

	ctx context.Context // lives until shutdown; parent of watchers and sessions

	mu       sync.Mutex
	sessions map[uint64]*session
	conns    map[net.Conn]struct{} // every open connection, in any phase
	nextID   atomic.Uint64
	wg       sync.WaitGroup // connection handlers
}

// session is one harness connection serving MCP.
type session struct {
	SessionStatus
	ss *mcp.ServerSession
}

type sessionKey struct{}

// newTarget builds the watcher, upstream and MCP server for one target. The tool list comes
// from proxy.Tools, not from the backend, so initialize and tools/list answer at once and never
// change whatever the backend does.
func (d *daemon) newTarget(key string, env discovery.Target) *target {
	t := &target{key: key, env: env, stats: newCallStats(), created: time.Now()}
	wlog := d.log.Sugar().With("target", key)
	t.watcher = discovery.NewWatcher(env, &discovery.WatchOptions{
		Logger: func(msg string, kv ...any) { wlog.Infow(msg, kv...) },
	})
	if err := t.watcher.Start(d.ctx); err != nil {
		// The watcher keeps re-checking on its own; the tools report backend_unavailable.
		d.log.Warn("watcher start", zap.String("target", key), zap.Error(err))
	}
	t.upstream = proxy.NewUpstream(t.watcher, d.upstream)
	t.server = proxy.NewServer(t.upstream, &proxy.ServerOptions{
		Tools:  proxy.Tools,
		Logger: d.sdkLog,
		OnCall: func(ctx context.Context, r proxy.CallRecord) { d.recordCall(ctx, t, r) },
	})
	d.log.Info("target opened", zap.String("target", key),
		zap.String("state_dir", t.watcher.Current().Resolved.StateDir))
	return t
}

// recordCall keeps stats and logs one tool call: never its arguments, never the token.
func (d *daemon) recordCall(ctx context.Context, t *target, r proxy.CallRecord) {
	t.stats.record(r.Tool, r.Code, r.Info.RuntimeID, r.Duration, time.Now())
	var sid uint64
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		sid = s.ID
	}
	outcome := r.Code
	if outcome == "" {
		outcome = "ok"
	}
	d.log.Info("tool call",
		zap.String("tool", r.Tool), zap.Bool("write", r.Write), zap.String("target", t.key),
		zap.Uint64("session", sid), zap.String("runtime_id", r.Info.RuntimeID),
		zap.Uint64("generation", r.Info.Generation), zap.Duration("duration", r.Duration),
		zap.String("outcome", outcome), zap.Bool("retried", r.Info.Retried))
}

// serve accepts until the listener closes.
func (d *daemon) serve() {
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				d.log.Error("accept", zap.Error(err))
			}
			return
		}
		if !d.track(c) {
			c.Close()
			return
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.untrack(c)
			d.handle(c)
		}()
	}
}

func (d *daemon) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conns == nil {
		return false // shutting down
	}
	d.conns[c] = struct{}{}
	return true
}

func (d *daemon) untrack(c net.Conn) {
	c.Close()
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
}

// handle checks the peer, reads the preamble and dispatches.
func (d *daemon) handle(c *net.UnixConn) {
	uid, pid, err := peerCred(c)
	if err != nil || uid != os.Getuid() {
		// Another user (or an unknowable one): say nothing, just close.
		d.log.Warn("refused a connection from another user", zap.Int("uid", uid), zap.Int("pid", pid), zap.Error(err))
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(preambleWait))
	br := bufio.NewReaderSize(c, 4096)
	pre, err := readPreamble(br)
	if err != nil {
		d.log.Warn("bad preamble", zap.Int("pid", pid), zap.Error(err))
		_, _ = c.Write(endpoint.Line(endpoint.Reply{Resmongw: endpoint.Protocol, Error: err.Error()}))
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	env := discovery.TargetFromEnv(func(k string) string { return pre.Env[k] })
	switch pre.Kind {
	case endpoint.KindStatus:
		st := d.status(env)
		_, _ = c.Write(endpoint.Line(st))
	case endpoint.KindMCP:
		d.serveMCP(c, br, pre, pid, env)
	}
}

// readPreamble reads one bounded JSON line.
func readPreamble(br *bufio.Reader) (*endpoint.Preamble, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > endpoint.MaxPreamble {
			return nil, fmt.Errorf("preamble longer than %d bytes", endpoint.MaxPreamble)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("reading preamble: %w", err)
		}
	}
	var p endpoint.Preamble
	if err := json.Unmarshal(line, &p); err != nil {
		return nil, fmt.Errorf("preamble is not JSON: %w", err)
	}
	if p.Resmongw != endpoint.Protocol {
		return nil, fmt.Errorf("preamble protocol %d, this daemon speaks %d (restart the daemon after an upgrade)", p.Resmongw, endpoint.Protocol)
	}
	if p.Kind != endpoint.KindMCP && p.Kind != endpoint.KindStatus {
		return nil, fmt.Errorf("unknown preamble kind %q", p.Kind)
	}
	return &p, nil
}

// serveMCP binds the connection to its target's server until either side ends the session.
func (d *daemon) serveMCP(c *net.UnixConn, br *bufio.Reader, pre *endpoint.Preamble, pid int, env discovery.Target) {
	t := d.targets.acquire(env)
	if t == nil {
		_, _ = c.Write(endpoint.Line(endpoint.Reply{Resmongw: endpoint.Protocol, Error: "the daemon is shutting down"}))
		return
	}
	defer d.targets.release(t)
	s := &session{SessionStatus: SessionStatus{ID: d.nextID.Add(1), Target: t.key, Client: pre.Client, PID: pid, HarnessPID: pre.PPID, Since: time.Now()}}
	if _, err := c.Write(endpoint.Line(endpoint.Reply{Resmongw: endpoint.Protocol, OK: true, Version: Version})); err != nil {
		return
	}
	// The reader keeps br: bytes the shim sent right after the preamble are already in it.
	tr := proxy.WrapTransport(&lineTransport{c: c, br: br}, proxy.Tools)
	ss, err := t.server.Connect(context.WithValue(d.ctx, sessionKey{}, s), tr, nil)
	if err != nil {
		d.log.Warn("session connect", zap.Error(err))
		return
	}
	s.ss = ss
	if !d.addSession(s) {
		_ = ss.Close()
		return
	}
	d.log.Info("session opened", zap.Uint64("session", s.ID), zap.String("target", t.key),
		zap.String("client", s.Client), zap.Int("pid", pid))
	err = ss.Wait()
	d.removeSession(s)
	d.log.Info("session closed", zap.Uint64("session", s.ID), zap.String("target", t.key), zap.Error(ignoreClosed(err)))
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (d *daemon) addSession(s *session) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sessions == nil {
		return false
	}
	d.sessions[s.ID] = s
	return true
}

func (d *daemon) removeSession(s *session) {
	d.mu.Lock()
	delete(d.sessions, s.ID)
	d.mu.Unlock()
}

// shutdown stops accepting, closes every session (gracefully, then by force), the targets,
// and unlinks the socket, all within bounded time.
func (d *daemon) shutdown() {
	_ = d.ln.Close() // unlinks the socket
	d.mu.Lock()
	sessions := d.sessions
	d.sessions = nil
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.ss.Close() }()
	}
	waitBounded(&wg, closeSessions)
	d.mu.Lock()
	conns := d.conns
	d.conns = nil
	d.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	d.targets.closeAll()
	waitBounded(&d.wg, forceWait)
}

func waitBounded(wg *sync.WaitGroup, limit time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}
