package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/proxy"
)

// newTestDaemon is a real accept loop and MCP stack on ln (socket path socket), with a fake
// backend and an observed logger. The caller runs it (serve or run).
func newTestDaemon(t *testing.T, socket string, ln listener) (*daemon, *observer.ObservedLogs, context.CancelFunc) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{socket: socket, started: time.Now(), log: zap.New(core), sdkLog: slog.New(slog.DiscardHandler),
		ctx: ctx, sessions: map[uint64]*session{}, conns: map[net.Conn]struct{}{}, failed: make(chan error, 1)}
	d.setListener(ln)
	d.targets = &targets{m: map[string]*target{}, idleTTL: time.Hour, log: zap.NewNop(),
		make: func(key string, env discovery.Target) *target {
			w := discovery.NewWatcher(env, nil) // never started: the fake API needs no discovery
			tg := &target{key: key, env: env, watcher: w, upstream: proxy.NewUpstream(w, nil), stats: newCallStats()}
			tg.server = proxy.NewServer(okAPI{}, &proxy.ServerOptions{Tools: proxy.Tools,
				OnCall: func(ctx context.Context, r proxy.CallRecord) { d.recordCall(ctx, tg, r) }})
			return tg
		}}
	return d, logs, cancel
}

func testSocket(t *testing.T) (string, *net.UnixListener) {
	t.Helper()
	socket := filepath.Join(testkit.ShortTempDir(t), "s.sock")
	ln, err := listenPrivate(socket)
	if err != nil {
		t.Fatal(err)
	}
	return socket, ln
}

// flakyListener fails its first n accepts with err, then accepts for real.
type flakyListener struct {
	*net.UnixListener
	n   atomic.Int32
	err error
}

func (l *flakyListener) AcceptUnix() (*net.UnixConn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.UnixListener.AcceptUnix()
}

// B1: EMFILE and friends are waited out with a backoff and logged, not the end of the daemon:
// after the failures a client is served, and the daemon still exits 0 on a signal.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	socket, ul := testSocket(t)
	const fails = 4
	ln := &flakyListener{UnixListener: ul, err: &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}}
	ln.n.Store(fails)
	d, logs, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() { code <- d.run(sigs, time.Hour) }()

	c, br := dialSession(t, socket)
	if _, err := c.Write([]byte(testkit.InitializeRequest("1", "2025-06-18", "t") + "\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := br.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"result"`) {
		t.Fatalf("initialize after accept errors: %q %v", line, err)
	}
	c.Close()
	if got := logs.FilterMessage("accept failed; retrying").Len(); got != fails {
		t.Errorf("%d retry log lines, want %d", got, fails)
	}
	sigs <- syscall.SIGTERM
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after SIGTERM, want 0", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
}

// B1: a listener that fails for good makes serve exit 1, so systemd/launchd restart it.
func TestListenerFailureExitsNonZero(t *testing.T) {
	socket, ul := testSocket(t)
	ln := &flakyListener{UnixListener: ul, err: &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EINVAL)}}
	ln.n.Store(1)
	d, logs, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- d.run(make(chan os.Signal), time.Hour) }()
	select {
	case c := <-code:
		if c != 1 {
			t.Errorf("exit %d after the listener failed, want 1", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after the listener failed")
	}
	if logs.FilterMessageSnippet("listener stopped unexpectedly").Len() != 1 {
		t.Errorf("no error line for the failed listener: %v", logs.All())
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// B1: a connection whose peer credentials cannot be read (closed under us at shutdown, or a
// peer that hung up) is not "another user".
func TestUnreadablePeerIsNotAnotherUser(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	defer ul.Close()
	cli, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ul.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // what shutdown does to connections still open
	d.handle(srv)
	if n := logs.FilterMessageSnippet("another user").Len(); n != 0 {
		t.Errorf("a closed connection was logged as another user: %v", logs.All())
	}
	if logs.FilterMessageSnippet("peer credentials unreadable").Len() != 1 {
		t.Errorf("the real error was not logged: %v", logs.All())
	}
}

// M2: the handler count is taken under the lock that shutdown closes, so connections racing
// shutdown never Add to the WaitGroup after Wait began (the race detector checks this).
func TestConnectionsRacingShutdown(t *testing.T) {
	// track itself counts the handler: the Done below would panic (negative counter) if the
	// Add still came afterwards, outside the lock.
	{
		socket, ul := testSocket(t)
		d, _, cancel := newTestDaemon(t, socket, ul)
		a, b := net.Pipe()
		if !d.track(a) {
			t.Fatal("track refused a connection before shutdown")
		}
		d.wg.Done()
		d.untrack(a)
		b.Close()
		ul.Close()
		cancel()
	}
	for round := 0; round < 5; round++ {
		socket, ul := testSocket(t)
		d, _, cancel := newTestDaemon(t, socket, ul)
		served := make(chan struct{})
		go func() { _ = d.serve(); close(served) }()
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		d.shutdown()
		wg.Wait()
		cancel()
		<-served
		if d.track(nil) {
			t.Fatal("track accepted a connection after shutdown")
		}
	}
}

// B3: client-chosen tool names neither grow the stats nor reach the log verbatim.
func TestUnknownToolNamesShareOneStatsEntry(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	served := make(chan struct{})
	go func() { _ = d.serve(); close(served) }()
	defer func() { d.shutdown(); <-served }()

	c, br := dialSession(t, socket)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	w := bufio.NewWriter(c)
	fmt.Fprint(w, fuzzInit)
	const n = 300
	long := strings.Repeat("x", 500)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bogus-%d-%s"}}`+"\n", i+1, i, long)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":100000,"method":"tools/call","params":{"name":"health"}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for got := 0; got < n+2; got++ { // initialize + the calls
		if _, err := br.ReadBytes('\n'); err != nil {
			t.Fatalf("after %d answers: %v", got, err)
		}
	}
	var tgt *target
	for _, x := range d.targets.list() {
		tgt = x
	}
	stats := tgt.stats.snapshot()
	names := map[string]uint64{}
	for _, s := range stats {
		names[s.Tool] = s.Calls
	}
	if len(names) != 2 || names[proxy.UnknownTool] != n || names["health"] != 1 {
		t.Errorf("%d stats entries (%d under %q, %d health), want 2: %q with %d calls and health with 1",
			len(names), names[proxy.UnknownTool], proxy.UnknownTool, names["health"], proxy.UnknownTool, n)
	}
	calls := logs.FilterMessage("tool call").All()
	if len(calls) != n+1 {
		t.Fatalf("%d tool call lines, want %d", len(calls), n+1)
	}
	for _, e := range calls {
		m := e.ContextMap()
		req, _ := m["requested"].(string)
		switch m["tool"] {
		case "health":
			if _, ok := m["requested"]; ok {
				t.Errorf("a known tool logged a requested name: %v", m)
			}
		case proxy.UnknownTool:
			if !strings.HasPrefix(req, "bogus-") || len(req) > proxy.MaxRequestedName+len("…") {
				t.Errorf("requested = %q (%d bytes), want the name cut to %d", req, len(req), proxy.MaxRequestedName)
			}
		default:
			t.Errorf("tool logged as %v", m["tool"])
		}
	}
}

// B3 (second fence): even names recorded directly are capped.
func TestCallStatsCapTheNumberOfTools(t *testing.T) {
	s := newCallStats()
	for i := 0; i < 5*maxTrackedTools; i++ {
		s.record(fmt.Sprintf("t%d", i), "", "", time.Millisecond, time.Now())
	}
	if got := len(s.snapshot()); got > maxTrackedTools+1 {
		t.Errorf("%d tool entries, want at most %d", got, maxTrackedTools+1)
	}
}

// B4: the daemon's drain after a half-close follows its request timeout: it outlasts the
// longest call (first check, a request, the wait for a new backend and the read's retry), so
// a raised --request-timeout does not cut answers off.
func TestDrainBoundFollowsTheRequestTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, 30 * time.Second, 2 * time.Minute} {
		o := &proxy.UpstreamOptions{Client: &proxy.ClientOptions{RequestTimeout: timeout}}
		got := drainBound(o)
		longest := proxy.DefaultFirstCheckWait + 2*timeout + proxy.DefaultRetryWait
		if got <= longest {
			t.Errorf("timeout %v: drain %v, want more than the longest call %v", timeout, got, longest)
		}
	}
	o := &proxy.UpstreamOptions{Client: &proxy.ClientOptions{RequestTimeout: 2 * time.Minute}}
	if drainBound(o) <= drainWait {
		t.Errorf("a 2m request timeout still drains for only %v", drainBound(o))
	}
	// And the session's connection uses it.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	conn, err := (&lineTransport{c: a, br: bufio.NewReader(a), drain: drainBound(o)}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if lc := conn.(*lineConn); lc.drain != drainBound(o) {
		t.Errorf("lineConn drain %v, want %v", lc.drain, drainBound(o))
	}
}

// B6: a removed socket file is re-created by the daemon, which still holds the lock.
func TestCheckSocketRelistensAfterRemoval(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	served := make(chan struct{})
	go func() { _ = d.serve(); close(served) }()
	defer func() { d.shutdown(); <-served }()
	c0, _ := dialSession(t, socket)
	c0.Close()

	d.checkSocket() // unchanged: nothing to do
	if logs.FilterMessageSnippet("removed or replaced").Len() != 0 {
		t.Fatal("re-listened on an intact socket")
	}
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	d.checkSocket()
	c, _ := dialSession(t, socket)
	c.Close()
	if logs.FilterMessageSnippet("removed or replaced").Len() != 1 {
		t.Errorf("re-listen not logged: %v", logs.All())
	}
	d.checkSocket() // the new file is ours now
	if logs.FilterMessageSnippet("removed or replaced").Len() != 1 {
		t.Error("re-listened again on the re-created socket")
	}
}

// R8: with the service installed, a stopped daemon is started, not installed again.
func TestStatusNotRunningSuggestsStartWhenInstalled(t *testing.T) {
	home := t.TempDir()
	socket := filepath.Join(t.TempDir(), "mcp.sock")
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	var out strings.Builder
	notRunning(&out, socket, false, true, getenv)
	if !strings.Contains(out.String(), "resmongw install") || strings.Contains(out.String(), "resmongw start") {
		t.Errorf("not installed:\n%s", out.String())
	}
	unit := serviceFile(home)
	if unit == "" {
		t.Skip("no per-user service on this system")
	}
	if err := os.MkdirAll(filepath.Dir(unit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	notRunning(&out, socket, false, true, getenv)
	if !strings.Contains(out.String(), "resmongw start") || strings.Contains(out.String(), "resmongw install") {
		t.Errorf("installed:\n%s", out.String())
	}
	out.Reset()
	notRunning(&out, socket, true, true, getenv)
	var v map[string]any
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil || v["service_installed"] != true || v["running"] != false {
		t.Errorf("json: %s (%v)", out.String(), err)
	}
}

// B6: the socket is re-created only while our lock file is still the one we locked, so two
// daemons can never take the path from each other in turns.
func TestCheckSocketNeedsOurLock(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	defer d.shutdown()
	dir := t.TempDir()
	lock := filepath.Join(dir, "daemon.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(lock)
	d.lockPath, d.lockFile = lock, fi
	// Replaced by another file (made while the old one still exists, so never its inode).
	if err := os.WriteFile(lock+".new", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock+".new", lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	d.checkSocket()
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("re-created the socket without holding the lock file: %v", err)
	}
	if logs.FilterMessageSnippet("so is our lock file").Len() != 1 {
		t.Errorf("not logged: %v", logs.All())
	}
}
