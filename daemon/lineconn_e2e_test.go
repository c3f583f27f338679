package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// rawSession is a client speaking JSON-RPC lines on the daemon's socket itself, after the
// preamble exchange.
type rawSession struct {
	t  testing.TB
	c  *net.UnixConn
	br *bufio.Reader
}

func (w *world) rawSession(env map[string]string) *rawSession {
	w.T.Helper()
	env["HOME"] = w.Home
	pre := sessionwire.Line(sessionwire.Preamble{Resmongw: sessionwire.Protocol, Kind: sessionwire.KindMCP, Env: env})
	c, br, line, err := testkit.DialPreamble(w.Socket, pre, 60*time.Second)
	var reply sessionwire.Reply
	if err != nil || json.Unmarshal(line, &reply) != nil || !reply.OK {
		w.T.Fatalf("preamble reply %q: %v", line, err)
	}
	w.T.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second)) // no test hangs on a silent daemon
	return &rawSession{t: w.T, c: c, br: br}
}

func (s *rawSession) send(lines ...string) {
	s.t.Helper()
	if _, err := s.c.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rawSession) readLine() []byte {
	s.t.Helper()
	line, err := s.br.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("reading from the daemon: %v", err)
	}
	return line
}

// frame is one decoded line from the daemon.
type frame struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// A session survives lines that are not JSON-RPC (each gets its error reply) and a request
// in flight while they arrive is still answered, as is one still running when the client
// half-closes; only then does the daemon end the session.
func TestSessionSurvivesBadLinesAndKeepsInFlightAnswers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	s := w.rawSession(map[string]string{"RESMON_STATE_DIR": sim.StateDir()})
	s.send(testkit.InitializeRequest(`"init"`, "2025-06-18", "raw"), testkit.InitializedNotification)
	var init frame
	if err := json.Unmarshal(s.readLine(), &init); err != nil || init.ID != "init" || init.Result == nil {
		t.Fatalf("initialize: %+v %v", init, err)
	}
	// The call is slow, so the bad lines and the ping arrive while it runs.
	sim.SetDelay(300 * time.Millisecond)
	s.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search_corpus","arguments":{"query":"graph"}}}`,
		`garbage {`,
		`[{"jsonrpc":"2.0","id":99,"method":"ping"}]`,
		`17`,
		``,
		`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	// Five replies, in whatever order: one per bad line, the ping's and the call's.
	got := map[string]int{}
	for n := 0; n < 5; n++ {
		var f frame
		line := s.readLine()
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("a line that is not JSON: %q", line)
		}
		switch {
		case f.Error != nil && f.ID == nil && (f.Error.Code == -32700 || f.Error.Code == -32600):
			got[strconv.Itoa(f.Error.Code)]++
		case f.ID == float64(11) && string(f.Result) == "{}":
			got["ping"]++
		case f.ID == float64(10) && strings.Contains(string(f.Result), `papers`) && !strings.Contains(string(f.Result), `"isError":true`):
			got["call"]++
		default:
			t.Fatalf("unexpected line %q (so far %v)", line, got)
		}
	}
	if got["-32700"] != 1 || got["-32600"] != 2 || got["ping"] != 1 || got["call"] != 1 {
		t.Fatalf("replies %v", got)
	}

	// Half-close with a slow call running: its answer still comes, then the end of stream.
	s.send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"health","arguments":{}}}`)
	if err := s.c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var last frame
	if err := json.Unmarshal(s.readLine(), &last); err != nil || last.ID != float64(12) || last.Result == nil {
		t.Fatalf("the call running at the half-close: %+v %v", last, err)
	}
	if _, err := s.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last answer: %v, want EOF", err)
	}
	sim.SetDelay(0)
}

// --request-timeout bounds a backend request: a hung backend becomes backend_unavailable
// long before the harness would give up, while a session on another backend is served.
func TestRequestTimeoutFlag(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The backends first, so they stop after the daemon (cleanups run last-first): the
	// daemon's exit ends the requests still held in the slow one's delay, which its shutdown
	// would otherwise wait out.
	slow, fast := startSim(t), startSim(t)
	// Short against the backend's minute and the harness's 20 s, long enough that the fast
	// backend's answers always fit on a loaded machine (a timed-out one would fail the test).
	// The timed-out read then waits --retry-wait for a new backend, which never comes here.
	w.startDaemon("--request-timeout", "2s", "--retry-wait", "100ms")
	ctx := testCtx(t)
	a := w.connect(ctx, "2025-11-25", simEnv(slow)...)
	b := w.connect(ctx, "2025-11-25", simEnv(fast)...)
	healthRuntimeID(ctx, t, a.cs)
	slow.SetDelay(time.Minute)
	defer slow.SetDelay(0)

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	hung := make(chan outcome, 1)
	go func() {
		// Well under the backend's delay: without the flag this call would hit this deadline.
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := a.cs.CallTool(cctx, &mcp.CallToolParams{Name: "search_corpus", Arguments: map[string]any{"query": "graph"}})
		hung <- outcome{res, err}
	}()
	for i := 0; i < 3; i++ {
		if got := healthRuntimeID(ctx, t, b.cs); got != fast.RuntimeID() {
			t.Fatalf("the other target answered from %s", got)
		}
	}
	o := <-hung
	if o.err != nil || !o.res.IsError || len(o.res.Content) != 1 {
		t.Fatalf("the call on the hung backend: %+v %v", o.res, o.err)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(o.res.Content[0].(*mcp.TextContent).Text), &p); err != nil || p["error"] != "backend_unavailable" {
		t.Fatalf("the call on the hung backend: %v %v", p, err)
	}
}

// A bad RESMONGW_REQUEST_TIMEOUT is a usage error, not a silent default.
func TestRequestTimeoutEnvValidated(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "serve", "--socket", w.Socket)
	cmd.Env = w.Env("RESMONGW_REQUEST_TIMEOUT=soon")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "RESMONGW_REQUEST_TIMEOUT") {
		t.Fatalf("serve with a bad timeout: %v %q, want exit 2 naming the variable", err, out)
	}
}
