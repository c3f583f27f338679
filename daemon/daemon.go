package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/tools"
)

// Bounds.
const (
	preambleWait  = 5 * time.Second // a client must send its preamble this fast
	closeSessions = 3 * time.Second // graceful session close at shutdown, then force
	forceWait     = 2 * time.Second

	// Accept retry after a temporary error (EMFILE and the like), as net/http.Server does:
	// a daemon out of descriptors must wait for some to free up, not exit or spin.
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second

	// socketCheck is how often the daemon checks that its socket file is still the one it
	// listens on; a removed or replaced file is re-created (we hold the lock, so the path is
	// ours). Shims that find no socket while the lock is held wait longer than this.
	socketCheck = 2 * time.Second
)

// listener is what the accept loop needs of a *net.UnixListener (a test wraps one to inject
// accept errors).
type listener interface {
	AcceptUnix() (*net.UnixConn, error)
	Close() error
	SetUnlinkOnClose(bool)
}

// daemon is one running `resmongw serve`.
type daemon struct {
	socket  string
	logFile string
	started time.Time
	log     *zap.Logger
	sdkLog  *slog.Logger
	targets *targets
	// upstream configures every target's backend client (the request timeout); nil means
	// the defaults.
	upstream *backend.UpstreamOptions
	// confirm is how writes are confirmed: the key of the states this process signs, the
	// timeout, the states still open (mcpserver/confirm.go); in memory only.
	confirm *mcpserver.Confirmations

	ctx context.Context // lives until shutdown; parent of watchers and sessions

	// failed receives the error of an accept loop that stopped on its own (not because we
	// closed its listener); ServeMain then exits 1 so the service manager restarts us. nil
	// (tests) drops it.
	failed chan error
	// stopReq carries a stop asked for from inside (a control request); buffered 1.
	stopReq chan stopMode

	mu      sync.Mutex
	ln      listener    // the current listener; replaced when the socket file is re-created
	lnFile  os.FileInfo // the socket file as we created it, to notice removal or replacement
	closing bool        // shutdown has begun: the socket is no longer kept
	// lockPath and lockFile are the lock file and what it was when we locked it: the socket
	// is re-created only while that file is still the one we hold, so two daemons (after
	// someone deleted the lock file) cannot take the path from each other in turns. Set
	// before serving, read-only after.
	lockPath string
	lockFile os.FileInfo
	sessions map[uint64]*session
	conns    map[net.Conn]struct{} // every open connection, in any phase; nil once shutting down
	nextID   atomic.Uint64
	idle     *idleExit     // the autostarted daemon's idle timer (idle.go); nil when it stays
	activity *activity.Log // the record of calls `resmongw activity` shows (activity.go)
	// exe is the binary we run from (upgrade.go); zero in tests that build a daemon in process.
	exe         executable
	handingOver atomic.Bool    // a newer binary was seen and a restart asked for
	wg          sync.WaitGroup // connection handlers; Add only under mu while conns != nil

	// logProblem says why the log file could not be opened ("" when logFile is in use); the
	// daemon then logs to stderr.
	logProblem string
}

// stopMode says what open sessions are told when the daemon goes away.
type stopMode int

const (
	// stopRestart: the daemon is going away but a daemon will be back (SIGTERM from the
	// service manager, `resmongw restart`, an upgrade): shims keep their harness session and
	// reconnect.
	stopRestart stopMode = iota
	// stopEnd: the person asked for the daemon to stop (`resmongw stop`): sessions end.
	stopEnd
)

func (m stopMode) String() string {
	if m == stopEnd {
		return "stop"
	}
	return "restart"
}

// requestStop asks run to shut down with mode m (the first request wins). Safe from any
// goroutine; never blocks.
func (d *daemon) requestStop(m stopMode) {
	select {
	case d.stopReq <- m:
	default:
	}
}

type sessionKey struct{}

// newTarget builds the watcher, upstream and MCP server for one target. The tool list comes
// from tools.Tools, not from the backend, so initialize and tools/list answer at once and never
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
	t.upstream = backend.NewUpstream(t.watcher, d.upstream)
	t.server = mcpserver.NewServer(t.upstream, &mcpserver.ServerOptions{
		Tools:  tools.Tools,
		Logger: d.sdkLog,
		OnCall: func(ctx context.Context, r mcpserver.CallRecord) { d.recordCall(ctx, t, r) },
	})
	d.log.Info("target opened", zap.String("target", key),
		zap.String("state_dir", t.watcher.Current().Resolved.StateDir))
	return t
}

// recordCall keeps stats, the activity record and a log line of one tool call: never its
// arguments, never the token.
func (d *daemon) recordCall(ctx context.Context, t *target, r mcpserver.CallRecord) {
	now := time.Now()
	t.stats.record(r.Tool, r.Code, r.Info.RuntimeID, r.Duration, now)
	var sid uint64
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		sid = s.ID
	}
	outcome := activity.Outcome(r.Code, r.Confirmation, r.OutcomeUnknown)
	d.activity.Add(activity.Record{Time: now, Session: sid, Client: clip(r.Client), ClientVersion: clip(r.ClientVersion),
		Target: t.key, Tool: r.Tool, Write: r.Write, Outcome: outcome, Confirmation: r.Confirmation,
		DurationMS: float64(r.Duration.Microseconds()) / 1000})
	fields := make([]zap.Field, 0, 12)
	if r.Requested != "" {
		// Only for unknown tools, and already cut short by the MCP server: a client-chosen string.
		fields = append(fields, zap.String("requested", r.Requested))
	}
	d.log.Info("tool call", append(fields,
		zap.String("tool", r.Tool), zap.Bool("write", r.Write), zap.String("target", t.key),
		zap.Uint64("session", sid), zap.String("runtime_id", r.Info.RuntimeID),
		zap.Uint64("generation", r.Info.Generation), zap.Duration("duration", r.Duration),
		zap.String("outcome", outcome), zap.String("confirmation", r.Confirmation), zap.Bool("retried", r.Info.Retried))...)
}

// serve accepts on the current listener; see acceptLoop.
func (d *daemon) serve() error {
	d.mu.Lock()
	ln := d.ln
	d.mu.Unlock()
	return d.acceptLoop(ln)
}

// acceptLoop accepts until ln is closed by us (nil) or fails for good (the error, also sent
// to d.failed). Temporary errors are retried with a capped backoff.
func (d *daemon) acceptLoop(ln listener) error {
	var delay time.Duration
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			if temporaryAcceptError(err) {
				delay = min(max(2*delay, acceptRetryMin), acceptRetryMax)
				d.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("retry_in", delay))
				select {
				case <-time.After(delay):
				case <-d.ctx.Done():
					return nil
				}
				continue
			}
			d.log.Error("accept", zap.Error(err))
			if d.failed != nil {
				select {
				case d.failed <- err:
				default:
				}
			}
			return err
		}
		delay = 0
		if !d.track(c) {
			c.Close()
			return nil
		}
		go func() {
			defer d.wg.Done()
			defer d.untrack(c)
			d.handle(c)
		}()
	}
}

// temporaryAcceptError reports whether an accept error is worth waiting out: out of
// descriptors or memory, or a connection that died before we took it.
func temporaryAcceptError(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// track registers c and counts its handler in d.wg, both under d.mu, so no Add can follow
// shutdown's Wait. It refuses once shutdown has begun.
func (d *daemon) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conns == nil {
		return false // shutting down
	}
	d.conns[c] = struct{}{}
	d.wg.Add(1)
	return true
}

func (d *daemon) untrack(c net.Conn) {
	c.Close()
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
}

// setListener makes ln the current listener and remembers its socket file.
func (d *daemon) setListener(ln listener) {
	fi, err := os.Lstat(d.socket)
	if err != nil {
		fi = nil // checkSocket will re-create it
	}
	d.mu.Lock()
	d.ln, d.lnFile = ln, fi
	d.mu.Unlock()
}

// keepSocket re-creates the socket whenever its file is gone or replaced, until ctx ends.
// Without it, deleting mcp.sock (a tmp cleaner, a user tidying up) leaves a daemon that holds
// the lock, so no other can start, and that nobody can reach.
func (d *daemon) keepSocket(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.checkSocket()
		}
	}
}

// checkSocket re-listens when the socket file is not the one we listen on.
func (d *daemon) checkSocket() {
	d.mu.Lock()
	want, closing := d.lnFile, d.closing
	d.mu.Unlock()
	if closing {
		return
	}
	fi, err := os.Lstat(d.socket)
	if err == nil && want != nil && os.SameFile(fi, want) {
		return
	}
	if d.lockPath != "" {
		if cur, err := os.Stat(d.lockPath); err != nil || d.lockFile == nil || !os.SameFile(cur, d.lockFile) {
			d.log.Error("the socket file is gone and so is our lock file; not re-creating the socket (restart the daemon)",
				zap.String("socket", d.socket), zap.String("lock", d.lockPath))
			return
		}
	}
	d.log.Warn("the socket file was removed or replaced; listening on it again", zap.String("socket", d.socket))
	ln, err := listenPrivate(d.socket)
	if err != nil {
		d.log.Error("re-listen", zap.Error(err))
		return // tried again at the next check
	}
	fi, _ = os.Lstat(d.socket)
	d.mu.Lock()
	if d.closing { // shutdown began meanwhile: it closes d.ln, not this one
		d.mu.Unlock()
		_ = ln.Close()
		return
	}
	old := d.ln
	d.ln, d.lnFile = ln, fi
	d.mu.Unlock()
	// The old listener's path is now the new socket: closing must not unlink it.
	old.SetUnlinkOnClose(false)
	_ = old.Close()
	go func() { _ = d.acceptLoop(ln) }()
	d.log.Info("listening again", zap.String("socket", d.socket))
}

// handle checks the peer, reads the preamble and dispatches.
func (d *daemon) handle(c *net.UnixConn) {
	uid, pid, err := sessionwire.PeerCred(c)
	if err != nil {
		// Usually a peer that already hung up (or a connection closed by shutdown): nobody to
		// refuse, so not a warning about another user.
		d.log.Info("connection dropped: peer credentials unreadable", zap.Error(err))
		return
	}
	if uid != os.Getuid() {
		// Another user: say nothing, just close.
		d.log.Warn("refused a connection from another user", zap.Int("uid", uid), zap.Int("pid", pid))
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(preambleWait))
	br := bufio.NewReaderSize(c, 4096)
	pre, err := sessionwire.ReadPreamble(br)
	if err != nil {
		d.log.Warn("bad preamble", zap.Int("pid", pid), zap.Error(err))
		refuse(c, err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	env := discovery.TargetFromEnv(func(k string) string { return pre.Env[k] })
	switch pre.Kind {
	case sessionwire.KindStatus:
		st := d.status(env)
		_, _ = c.Write(sessionwire.Line(st))
	case sessionwire.KindMCP:
		d.serveMCP(c, br, pre, pid, env)
	case sessionwire.KindStop, sessionwire.KindRestart:
		d.control(c, pre.Kind, pid)
	case sessionwire.KindActivity:
		d.serveActivity(c)
	}
}

// serveMCP binds the connection to its target's server until either side ends the session.
func (d *daemon) serveMCP(c *net.UnixConn, br *bufio.Reader, pre *sessionwire.Preamble, pid int, env discovery.Target) {
	d.mu.Lock()
	closing := d.closing
	d.mu.Unlock()
	// A session accepted as the stop began would end unannounced: refuse it now. The shim
	// tries again on errShuttingDown (shim.shuttingDown), and reaches the next daemon; any
	// other refusal is the shim's one line on its harness's log.
	// A session from a newer binary at our path is refused the same way, so its shim
	// reconnects to the daemon that binary starts (upgrade.go).
	t, err := (*target)(nil), errShuttingDown
	if !closing && !d.handOver(pre, pid) {
		t, err = d.targets.acquire(env)
	}
	if err != nil {
		d.log.Warn("session refused", zap.Int("pid", pid), zap.Error(err))
		refuse(c, err)
		return
	}
	// The target is released before the session leaves d.sessions, so that once status
	// shows a session gone, its target is idle (and can make room for another).
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { d.targets.release(t) }) }
	defer release()
	policy, ok := writePolicy(c, pre)
	if !ok {
		return
	}
	writes := d.confirm.Session(policy)
	defer writes.Close()
	s := &session{writes: writes, SessionStatus: statusdoc.SessionStatus{ID: d.nextID.Add(1), Target: t.key, Client: pre.Client, PID: pid, HarnessPID: pre.PPID, Since: time.Now()},
		ended: make(chan struct{})}
	defer close(s.ended)
	// The session is registered, with the connection a stop drains, before the client hears
	// OK and before a line of it is read: a stop that begins at any moment after this drains
	// it and says goodbye; one that began before refuses it here, with nothing read.
	// The reader keeps br: bytes the shim sent right after the preamble are already in it.
	lt := &lineTransport{c: c, br: br, drain: drainBound(d.upstream), goodbye: pre.Session >= 1}
	s.lc = lt.open()
	if !d.addSession(s) {
		_, _ = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, Error: "the daemon is shutting down"}))
		return
	}
	defer d.removeSession(s)
	ss, err := connectSession(context.WithValue(d.ctx, sessionKey{}, s), c, t.server, lt, pre, writes)
	if err != nil {
		if !errors.Is(err, errNoReply) {
			d.log.Warn("session connect", zap.Error(err))
		}
		return
	}
	d.mu.Lock()
	s.ss = ss
	d.mu.Unlock()
	d.log.Info("session opened", zap.Uint64("session", s.ID), zap.String("target", t.key),
		zap.String("client", s.Client), zap.Int("pid", pid), zap.Int("session_protocol", pre.Session),
		zap.String("writes", string(policy)))
	err = ss.Wait()
	release()
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
	d.sessionsChanged()
	return true
}

func (d *daemon) removeSession(s *session) {
	d.mu.Lock()
	if d.sessions[s.ID] != s {
		d.mu.Unlock()
		return // shutdown took the map
	}
	delete(d.sessions, s.ID)
	d.sessionsChanged()
	d.mu.Unlock()
}

// shutdown stops accepting, closes every session (gracefully, then by force), the targets,
// and unlinks the socket, all within bounded time. mode says what sessions are told.
func (d *daemon) shutdown(mode stopMode) {
	d.mu.Lock()
	d.closing = true
	ln, lnFile := d.ln, d.lnFile
	sessions := d.sessions
	d.sessions = nil
	d.mu.Unlock()
	// Close unlinks the socket path; if the file there is no longer ours (replaced in the
	// last moments), leave it.
	if fi, err := os.Lstat(d.socket); lnFile != nil && (err != nil || !os.SameFile(fi, lnFile)) {
		ln.SetUnlinkOnClose(false)
	}
	_ = ln.Close()
	// Drain first: every session stops taking calls, answers those running and says goodbye
	// (session_drain.go), so a restart loses no answer and a shim knows what to send again.
	// The bound is the longest one call can take; a session still open after it is closed.
	var drained sync.WaitGroup
	for _, s := range sessions {
		drained.Add(1)
		go func() { defer drained.Done(); s.drain(mode) }()
	}
	if !waitBounded(&drained, drainBound(d.upstream)+closeSessions) {
		d.log.Warn("sessions still running calls at the drain bound; closing them", zap.Duration("bound", drainBound(d.upstream)))
	}
	var wg sync.WaitGroup
	for _, s := range sessions {
		d.mu.Lock()
		ss := s.ss
		d.mu.Unlock()
		if ss == nil {
			continue // never connected: its socket is closed below
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = ss.Close() }()
	}
	waitBounded(&wg, closeSessions)
	d.mu.Lock()
	conns := d.conns
	d.conns = nil
	d.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	// A session's socket is closed by its lineConn, which closes it once.
	for _, s := range sessions {
		if s.lc != nil {
			_ = s.lc.Close()
		}
	}
	d.targets.closeAll()
	waitBounded(&d.wg, forceWait)
}

// shutdownBound is the longest shutdown can take with upstream options o: the drain, the
// sessions' close, the handlers' exit (the three waits above).
func shutdownBound(o *backend.UpstreamOptions) time.Duration {
	return drainBound(o) + 2*closeSessions + forceWait
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
