package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/tools"
)

// Protocol is the MCP version every benchmark client asks for: a version that still opens with
// initialize, as the harnesses in use today do, so "cold start" means "to the initialize result".
const Protocol = "2025-11-25"

// World is one measurement environment, in a private temporary directory: the simulated
// backend every session calls in a process of its own (Ext, `resmongw dev backend`), a second
// simulator in this process that only the swap measurement restarts (Sim), and a daemon
// (`resmongw serve`) in its own process.
type World struct {
	Dir    string
	Bin    string
	Ext    *ExternalSim
	Sim    *resmonsim.Sim
	Socket string
	Daemon *testkit.Proc
	// DaemonEnv is added to the daemon's environment (e.g. GOGC=400 to try a GC setting;
	// GODEBUG=gctrace=1 lets GC count the daemon's allocations).
	DaemonEnv []string
	// GC reads the daemon's stderr: its gctrace lines when DaemonEnv turns them on.
	GC *GCTrace
	// Before is a second daemon, built from another tree (StartBefore), measured beside this
	// one in the same run against the same simulator; nil when there is none.
	Before *Side
	after  *Side // see Sides
}

// NewWorld makes the temporary directory, starts the simulator and the daemon (with daemonEnv
// added to its environment).
func NewWorld(bin string, daemonEnv ...string) (*World, error) {
	dir, err := os.MkdirTemp("", "resmongw-bench-")
	if err != nil {
		return nil, err
	}
	w := &World{Dir: dir, Bin: bin, Socket: filepath.Join(dir, "run", "mcp.sock"), DaemonEnv: daemonEnv}
	for _, d := range []string{"home", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			w.Close()
			return nil, err
		}
	}
	if w.Ext, err = StartExternalSim(bin, filepath.Join(dir, "resmon-ext")); err != nil {
		w.Close()
		return nil, err
	}
	if w.Sim, err = resmonsim.Start(resmonsim.Options{StateDir: filepath.Join(dir, "resmon")}); err != nil {
		w.Close()
		return nil, err
	}
	if w.Daemon, err = w.StartDaemon(w.Socket); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close stops the daemon and the simulator and removes the directory.
func (w *World) Close() {
	if w.Daemon != nil {
		w.Daemon.Stop(10 * time.Second)
	}
	if w.Before != nil && w.Before.Daemon != nil {
		w.Before.Daemon.Stop(10 * time.Second)
	}
	if w.Sim != nil {
		_ = w.Sim.Stop()
	}
	if w.Ext != nil {
		w.Ext.Stop()
	}
	_ = os.RemoveAll(w.Dir)
}

// Env is the environment of every child: a private HOME and state home, the socket, and the
// external simulator's state directory (so every session names the same target).
func (w *World) Env(socket string, extra ...string) []string {
	return w.envFor(w.Ext.StateDir, socket, extra...)
}

// SwapEnv is Env with the in-process simulator as the target: the one MeasureSwap restarts.
func (w *World) SwapEnv(socket string, extra ...string) []string {
	return w.envFor(w.Sim.StateDir(), socket, extra...)
}

func (w *World) envFor(stateDir, socket string, extra ...string) []string {
	user := testkit.World{Home: filepath.Join(w.Dir, "home"), StateHome: filepath.Join(w.Dir, "state"), Socket: socket}
	return user.Env(append([]string{"RESMON_STATE_DIR=" + stateDir}, extra...)...)
}

func lookup(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// StartDaemon runs `resmongw serve` on socket and waits until it accepts.
func (w *World) StartDaemon(socket string) (*testkit.Proc, error) {
	if w.GC == nil {
		w.GC = NewGCTrace()
	}
	return w.startDaemon(w.Bin, socket, "daemon.log", w.GC)
}

func (w *World) startDaemon(bin, socket, log string, gc *GCTrace) (*testkit.Proc, error) {
	cmd := exec.Command(bin, "serve", "--socket", socket, "--log-file", filepath.Join(w.Dir, "state", log))
	cmd.Env = w.Env(socket, w.DaemonEnv...)
	cmd.Stderr = gc
	p, err := testkit.Start(cmd)
	if err != nil {
		return nil, err
	}
	if err := testkit.WaitListening(socket, 10*time.Second, p); err != nil {
		p.Stop(time.Second)
		return nil, fmt.Errorf("daemon: %v (stderr: %q)", err, gc.Other())
	}
	return p, nil
}

// Session is one MCP client session, however it reaches the tools.
type Session struct {
	CS    *mcp.ClientSession
	Pid   int // the shim's pid, 0 when there is no shim
	close func()
}

// Close ends the session (and its shim or in-process server).
func (s *Session) Close() {
	_ = s.CS.Close()
	if s.close != nil {
		s.close()
	}
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "resmongw-bench", Version: "0"}, nil)
}

func clientOpts() *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: Protocol}
}

// ShimSession launches `resmongw stdio` as a harness does and completes initialize.
func (w *World) ShimSession(ctx context.Context, env []string) (*Session, error) {
	return shimSession(ctx, w.Bin, env)
}

func shimSession(ctx context.Context, bin string, env []string) (*Session, error) {
	cmd := exec.Command(bin, "stdio")
	cmd.Env = env
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, clientOpts())
	if err != nil {
		return nil, err
	}
	return &Session{CS: cs, Pid: cmd.Process.Pid}, nil
}

// SocketSession dials the daemon directly and speaks the shim's preamble: the shim path minus
// the shim process, for the scale runs too large for one process per session.
func (w *World) SocketSession(ctx context.Context) (*Session, error) {
	c, br, err := w.dialPreamble()
	if err != nil {
		return nil, err
	}
	tr := &mcp.IOTransport{Reader: connReader{br, c}, Writer: connWriter{c, c}}
	cs, err := newClient().Connect(ctx, tr, clientOpts())
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Session{CS: cs}, nil
}

// dialPreamble connects to the daemon, writes the preamble a shim would and consumes the
// daemon's reply line; what follows on the returned reader is the MCP stream.
func (w *World) dialPreamble() (*net.UnixConn, *bufio.Reader, error) {
	return w.dialPreambleTo(w.Socket)
}

func (w *World) dialPreambleTo(socket string) (*net.UnixConn, *bufio.Reader, error) {
	pre := sessionwire.NewPreamble(sessionwire.KindMCP, lookup(w.Env(socket)), "resmongw-bench")
	c, br, line, err := testkit.DialPreamble(socket, sessionwire.Line(pre), 10*time.Second)
	if err != nil {
		return nil, nil, fmt.Errorf("daemon reply: %w", err)
	}
	var reply sessionwire.Reply
	if err := json.Unmarshal(line, &reply); err != nil || !reply.OK {
		c.Close()
		return nil, nil, fmt.Errorf("daemon refused the session: %s (%v)", reply.Error, err)
	}
	return c, br, nil
}

// connReader and connWriter close the connection for the transport; a second close is no error.
type connReader struct {
	io.Reader
	c *net.UnixConn
}

type connWriter struct {
	io.Writer
	c *net.UnixConn
}

func (r connReader) Close() error { return closeOnce(r.c) }
func (w connWriter) Close() error { return closeOnce(w.c) }

func closeOnce(c *net.UnixConn) error {
	if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// InProcSession serves the tools from an MCP server in this process (watcher, upstream,
// server, wire wrapper: everything the daemon runs per target) over an in-memory pipe: the
// gateway without the socket, the shim or another process.
func InProcSession(ctx context.Context, stateDir string) (*Session, error) {
	// HOME only matters when RESMON_STATE_DIR is unset; point it next to the state dir anyway
	// so nothing ever looks at the real home.
	target := discovery.TargetFromEnv(lookup([]string{"RESMON_STATE_DIR=" + stateDir, "HOME=" + filepath.Dir(stateDir)}))
	wctx, cancel := context.WithCancel(context.Background())
	watcher := discovery.NewWatcher(target, nil)
	if err := watcher.Start(wctx); err != nil {
		cancel()
		return nil, err
	}
	up := backend.NewUpstream(watcher, nil)
	srv := mcpserver.NewServer(up, &mcpserver.ServerOptions{Tools: tools.Tools})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(wctx, mcpserver.WrapTransport(st, tools.Tools), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	cs, err := newClient().Connect(ctx, ct, clientOpts())
	if err != nil {
		_ = ss.Close()
		cancel()
		return nil, err
	}
	return &Session{CS: cs, close: func() {
		_ = ss.Close()
		up.Close()
		_ = watcher.Close()
		cancel()
	}}, nil
}

// StubSession serves the tools in this process from an API double that answers every backend
// request at once with a fixed health body: the cost of the MCP SDK (client and server) and
// the tool layer alone, with no HTTP at all.
func StubSession(ctx context.Context) (*Session, error) {
	srv := mcpserver.NewServer(stubAPI{}, &mcpserver.ServerOptions{Tools: tools.Tools})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), mcpserver.WrapTransport(st, tools.Tools), nil)
	if err != nil {
		return nil, err
	}
	cs, err := newClient().Connect(ctx, ct, clientOpts())
	if err != nil {
		_ = ss.Close()
		return nil, err
	}
	return &Session{CS: cs, close: func() { _ = ss.Close() }}, nil
}

type stubAPI struct{}

// stubHealth is shaped like the simulator's answer, so the tool layer does the same work.
var stubHealth = map[string]any{
	"status": "ok", "version": "2.3.0", "pid": 1234, "started_at": "2026-12-02T15:42:24.744240+00:00",
	"embeddings": map[string]any{"extension": "v0.1.9", "reason": nil},
	"identity": map[string]any{"build_id": nil, "contract_version": 1, "corpus_id": nil,
		"runtime_id": "79caaa17-df22-40db-b981-af5d6ada7b9c", "schema_version": 21},
}

func (stubAPI) Call(context.Context, *backend.Request) (any, error) { return stubHealth, nil }

// DirectHTTP is the baseline: the request the health tool makes, straight to the simulator
// with the same route and token over a keep-alive connection.
type DirectHTTP struct {
	client *http.Client
	url    string
	token  string
}

// NewDirectHTTP targets the external simulator. Its idle connections are kept as long as
// the server keeps them (the transport's own limit is off): the baseline is the best a
// keep-alive client can do.
func NewDirectHTTP(sim *ExternalSim) *DirectHTTP {
	return &DirectHTTP{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 0}},
		url: sim.BaseURL + "/api/health", token: sim.Token()}
}

// Call makes one request and reads the whole body.
func (d *DirectHTTP) Call(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("direct GET /api/health: HTTP %d", resp.StatusCode)
	}
	return nil
}

// Close drops the idle connections.
func (d *DirectHTTP) Close() { d.client.CloseIdleConnections() }

// CallHealth calls the health tool and returns its text; a tool error is an error.
func CallHealth(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	return CallTool(ctx, cs, "health", nil)
}

// CallTool calls one tool and returns the text of its answer; a tool error is an error that
// carries the text.
func CallTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if res.IsError {
		return text.String(), fmt.Errorf("%s: tool error: %.300s", name, text.String())
	}
	return text.String(), nil
}

// RSS is a process's resident set size in bytes, from /proc/<pid>/status (VmRSS).
func RSS(pid int) (int64, error) {
	rss, _, err := ProcMem(pid)
	return rss, err
}

// ProcMem returns VmRSS and RssAnon (the private part: heap and stacks, without the binary's
// file pages, which every process running the same binary shares) in bytes.
func ProcMem(pid int) (rss, anon int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	kb := func(v string) int64 {
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return -1
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		return n << 10
	}
	rss, anon = -1, -1
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		} else if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			anon = kb(v)
		}
	}
	if rss < 0 || anon < 0 {
		return 0, 0, errors.New("no VmRSS/RssAnon in /proc status")
	}
	return rss, anon, nil
}

// CPUTime is a process's user+system CPU time so far, from /proc/<pid>/stat (10 ms ticks on
// Linux; callers measure over many calls).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime and stime are fields 14 and 15
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	const clkTck = 100 // USER_HZ, fixed at 100 on every Linux architecture Go supports
	return time.Duration(ut+st) * (time.Second / clkTck), nil
}
