package shim

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

func TestScanMessage(t *testing.T) {
	cases := []struct {
		line       string
		id, method string
		response   bool
		tool       string
		ok         bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"name":"x"},"name":"health"}}`, "7", "tools/call", false, "health", true},
		{`{"params":{"name":"run_sweep"},"method":"tools/call","id":"a\"b","jsonrpc":"2.0"}`, `"a\"b"`, "tools/call", false, "run_sweep", true},
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"}{\"id\":8"}]}}`, "7", "", true, "", true},
		{`{"jsonrpc":"2.0","result":{},"id":9}`, "9", "", true, "", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "notifications/initialized", false, "", true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, "", "", true, "", true},
		{` { "\u0069d" : 3 , "method" : "ping" }`, "3", "ping", false, "", true},
		// Keys match exactly and the last of a repeated one counts, as in the daemon's and the
		// SDK's decoders: the shim judges the call the daemon runs.
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","Method":"ping","params":{"name":"create_watch_profile"}}`, "4", "tools/call", false, "create_watch_profile", true},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/call","params":{"name":"run_sweep"}}`, "5", "tools/call", false, "run_sweep", true},
		{`{"jsonrpc":"2.0","ID":6,"method":"ping"}`, "", "ping", false, "", true},
		{`{"jsonrpc":"2.0","id":7,"Result":{}}`, "7", "", false, "", true},
		{`{"jsonrpc":"2.0","id":8,"method":7}`, "8", "", false, "", true},
		{`{"id":1} {"id":2}`, "", "", false, "", false},
		{`{"id":1`, "", "", false, "", false},
		{`[1,2]`, "", "", false, "", false},
		{`not json`, "", "", false, "", false},
	}
	for _, c := range cases {
		m, ok := scanMessage([]byte(c.line))
		if ok != c.ok || string(m.id) != c.id || m.method != c.method || m.response != c.response || (c.method == "tools/call" && toolOfLine([]byte(c.line)) != c.tool) {
			t.Errorf("%s: got id %q method %q response %v tool %q ok %v", c.line, m.id, m.method, m.response, toolOfLine([]byte(c.line)), ok)
		}
	}
	for raw, key := range map[string]idKey{`1`: {kind: 'n', n: 1}, `1.0`: {kind: 'n', n: 1}, `1e2`: {kind: 'n', n: 100},
		`-7`: {kind: 'n', n: -7}, `12345678901234567890`: {kind: 'r', s: "12345678901234567890"},
		`"a"`: {kind: 's', s: "a"}, `"\u0061"`: {kind: 's', s: "a"}, `"a<b"`: {kind: 's', s: "a<b"}, `"a\u003cb"`: {kind: 's', s: "a<b"}} {
		if got := keyOf([]byte(raw)); got != key {
			t.Errorf("keyOf(%s) = %+v, want %+v", raw, got, key)
		}
	}
}

// scripted is a fake daemon: each connection is handed to the test, which plays the daemon.
type scripted struct {
	t     *testing.T
	conns chan *fakeConn
	path  string

	mu  sync.Mutex
	all []net.Conn // every connection accepted, closed when the test ends
}

// closeAll ends every connection the fake daemon accepted.
func (s *scripted) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.all {
		_ = c.Close()
	}
}

type fakeConn struct {
	c  net.Conn
	br *bufio.Reader
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	s := &scripted{t: t, conns: make(chan *fakeConn, 4), path: filepath.Join(testkit.ShortTempDir(t), "s.sock")}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(time.Minute))
			s.mu.Lock()
			s.all = append(s.all, c)
			s.mu.Unlock()
			s.conns <- &fakeConn{c: c, br: bufio.NewReader(c)}
		}
	}()
	return s
}

// next takes the next connection and its preamble, and replies as a daemon of session
// protocol session (0: an older daemon) whose only read tool is health.
func (s *scripted) next(session int) *fakeConn {
	s.t.Helper()
	var fc *fakeConn
	select {
	case fc = <-s.conns:
	case <-time.After(30 * time.Second):
		s.t.Fatal("the shim did not connect")
	}
	var pre sessionwire.Preamble
	if err := json.Unmarshal([]byte(fc.line(s.t)), &pre); err != nil || pre.Session != sessionwire.SessionProtocol {
		s.t.Fatalf("preamble %+v (%v)", pre, err)
	}
	reply := sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true}
	if session > 0 {
		reply.Session, reply.ReadTools = session, []string{"health"}
	}
	fc.write(s.t, string(sessionwire.Line(reply)))
	return fc
}

func (fc *fakeConn) line(t *testing.T) string {
	t.Helper()
	l, err := fc.br.ReadString('\n')
	if err != nil {
		t.Fatalf("fake daemon read: %v", err)
	}
	return strings.TrimSuffix(l, "\n")
}

// eof waits for the shim's half-close: the end of what it writes, with nothing more before it.
func (fc *fakeConn) eof(t *testing.T) {
	t.Helper()
	if l, err := fc.br.ReadString('\n'); err != io.EOF || l != "" {
		t.Fatalf("fake daemon: %q (%v), want the session's end", l, err)
	}
}

func (fc *fakeConn) write(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(fc.c, s); err != nil {
		t.Fatalf("fake daemon write: %v", err)
	}
}

// harness is the relay's other side: a stdin pipe and stdout read line by line.
type harness struct {
	in    *io.PipeWriter
	lines chan string
	code  chan int
}

func startRelay(t *testing.T, s *scripted) (*harness, *fakeConn) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{in: inW, lines: make(chan string, 64), code: make(chan int, 1)}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	conn, err := dial(s.path)
	if err != nil {
		t.Fatal(err)
	}
	// When the test is over no daemon takes the relay back, so it ends at once instead of
	// outliving the test (and writing to stderr while the next test owns it).
	var over atomic.Bool
	r := newRelay(func() (*net.UnixConn, error) {
		if over.Load() {
			return nil, sessionwire.ErrRefused
		}
		return dial(s.path)
	}, outW)
	r.wait = 5 * time.Second
	done := make(chan struct{})
	go func() { h.code <- r.run(conn, inR); close(done) }()
	t.Cleanup(func() {
		over.Store(true)
		inW.Close()
		outR.Close()
		s.closeAll()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the relay did not end after its test")
		}
	})
	return h, s.next(sessionwire.SessionProtocol)
}

func (h *harness) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-h.lines:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the harness got nothing")
	}
	return ""
}

const (
	initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	initNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	readReq  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"health","arguments":{}}}`
	writeReq = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_sweep","arguments":{}}}`
	laterReq = `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`
)

// openSession runs initialize and initialized through the relay.
func openSession(t *testing.T, h *harness, d *fakeConn) {
	t.Helper()
	h.send(t, initReq)
	if got := d.line(t); got != initReq {
		t.Fatalf("daemon got %q", got)
	}
	d.write(t, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`+"\n")
	if got := h.next(t); !strings.Contains(got, `"id":1,"result"`) {
		t.Fatalf("harness got %q", got)
	}
	h.send(t, initNote)
	if got := d.line(t); got != initNote {
		t.Fatalf("daemon got %q", got)
	}
}

// A daemon dies with a read and a write in flight: the write is answered at once (outcome
// unknown, never resent), the new daemon gets initialize (under the shim's id, its answer
// swallowed), initialized, the read once more, then a call the harness sent meanwhile.
func TestRelayCrashAnswersWritesRetriesReadsAndReplays(t *testing.T) {
	s := newScripted(t)
	h, d1 := startRelay(t, s)
	openSession(t, h, d1)
	h.send(t, readReq)
	h.send(t, writeReq)
	d1.line(t)
	d1.line(t)
	d1.c.Close() // the crash

	if got := h.next(t); !strings.Contains(got, `"id":3,`) || !strings.Contains(got, `whether it took effect is unknown`) || !strings.Contains(got, `"isError":true`) {
		t.Fatalf("the write in flight: %q", got)
	}
	d2 := s.next(sessionwire.SessionProtocol)
	h.send(t, laterReq) // waits in the pipe until the replay is done
	replay := d2.line(t)
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(replay), &m) != nil || string(m["method"]) != `"initialize"` || string(m["id"]) == "1" {
		t.Fatalf("first line on the new daemon %q, want initialize under the shim's own id", replay)
	}
	if !strings.Contains(replay, `"clientInfo":{"name":"h","version":"1"}`) {
		t.Fatalf("replayed initialize lost the harness's parameters: %q", replay)
	}
	d2.write(t, `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{"protocolVersion":"2025-06-18"}}`+"\n")
	for _, want := range []string{initNote, readReq, laterReq} {
		if got := d2.line(t); got != want {
			t.Fatalf("new daemon got %q, want %q", got, want)
		}
	}
	d2.write(t, `{"jsonrpc":"2.0","id":2,"result":{"again":true}}`+"\n")
	if got := h.next(t); !strings.Contains(got, `"id":2,"result":{"again":true}`) {
		t.Fatalf("the retried read: %q (the replay's answer must not reach the harness)", got)
	}

	// It dies again with the read (already retried) in flight: now it is answered.
	h.send(t, strings.Replace(readReq, `"id":2`, `"id":5`, 1))
	d2.line(t)
	d2.c.Close()
	d3 := s.next(sessionwire.SessionProtocol)
	d3.line(t)                              // the replay
	d3.line(t)                              // initialized
	if got := d3.line(t); got != laterReq { // unanswered on d2, sent there once: once more
		t.Fatalf("tools/list not retried once: %q", got)
	}
	if got := d3.line(t); !strings.Contains(got, `"id":5`) {
		t.Fatalf("read 5 not retried once: %q", got)
	}
	d3.c.Close()
	for _, id := range []string{`"id":4,"error":{"code":-32603`, `"id":5,"result"`} {
		if got := h.next(t); !strings.Contains(got, id) || !strings.Contains(got, "stopped twice") {
			t.Fatalf("after a second crash: %q, want %s… stopped twice", got, id)
		}
	}
}

// A graceful restart: what the old daemon never started (everything not answered and not
// listed as abandoned) goes to the new daemon, writes included; an abandoned write is
// answered as outcome unknown.
func TestRelayGoodbyeSendsUnstartedCallsOn(t *testing.T) {
	s := newScripted(t)
	h, d1 := startRelay(t, s)
	openSession(t, h, d1)
	h.send(t, writeReq)
	abandoned := strings.Replace(writeReq, `"id":3`, `"id":6`, 1)
	h.send(t, abandoned)
	d1.line(t)
	d1.line(t)
	d1.write(t, string(sessionwire.GoodbyeLine(sessionwire.GoodbyeRestart, []json.RawMessage{json.RawMessage("6")})))
	d1.c.Close()
	if got := h.next(t); !strings.Contains(got, `"id":6,`) || !strings.Contains(got, "unknown") {
		t.Fatalf("the abandoned write: %q", got)
	}
	d2 := s.next(sessionwire.SessionProtocol)
	d2.line(t) // replay
	d2.line(t) // initialized
	if got := d2.line(t); got != writeReq {
		t.Fatalf("the unstarted write: %q, want it sent to the new daemon", got)
	}
}

// `resmongw stop`: the session ends; what is left is answered as not sent, and the shim exits
// 1 with one line saying why.
func TestRelayGoodbyeStopEndsTheSession(t *testing.T) {
	errs := &testkit.SyncBuffer{}
	stderr = errs
	t.Cleanup(func() { stderr = os.Stderr })
	s := newScripted(t)
	h, d1 := startRelay(t, s)
	openSession(t, h, d1)
	h.send(t, writeReq)
	d1.line(t)
	d1.write(t, string(sessionwire.GoodbyeLine(sessionwire.GoodbyeStop, nil)))
	if got := h.next(t); !strings.Contains(got, `"id":3,`) || !strings.Contains(got, "was not sent and nothing was done") {
		t.Fatalf("the call left at the stop: %q", got)
	}
	select {
	case code := <-h.code:
		if code != 1 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "'resmongw stop'") {
			t.Fatalf("exit %d, stderr %q; want 1 and one line naming the stop", code, errs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shim did not end after the stop")
	}
}

// An older daemon (no session protocol in its reply) still serves, and after it dies the shim
// retries nothing it cannot know to be a read: every tools/call counts as a write.
func TestRelayOlderDaemonRetriesNoToolCall(t *testing.T) {
	s := newScripted(t)
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &testkit.SyncBuffer{}
	conn, err := dial(s.path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(func() (*net.UnixConn, error) { return dial(s.path) }, out)
	r.wait = 5 * time.Second
	go r.run(conn, inR)
	d1 := s.next(0)
	if _, err := io.WriteString(inW, readReq+"\n"); err != nil {
		t.Fatal(err)
	}
	d1.line(t)
	d1.c.Close()
	testkit.WaitFor(t, 30*time.Second, func() bool { return strings.Contains(out.String(), `"id":2,`) }, "the answer to the read")
	if !strings.Contains(out.String(), "unknown") {
		t.Fatalf("the read on an older daemon: %q, want it answered as a write", out.String())
	}
}

// The first daemon reached is stopping and refuses the session: the shim takes the session to
// the next daemon, and the harness's first request, written meanwhile, goes there.
func TestRelayFirstDaemonShuttingDownGoesToTheNext(t *testing.T) {
	s := newScripted(t)
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &testkit.SyncBuffer{}
	conn, err := dial(s.path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(func() (*net.UnixConn, error) { return dial(s.path) }, out)
	r.wait = 5 * time.Second
	go r.run(conn, inR)
	var d1 *fakeConn
	select {
	case d1 = <-s.conns:
	case <-time.After(30 * time.Second):
		t.Fatal("no connection")
	}
	d1.line(t) // preamble
	if _, err := io.WriteString(inW, initReq+"\n"); err != nil {
		t.Fatal(err)
	}
	d1.line(t) // the request, which this daemon will never read
	d1.write(t, string(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, Error: shuttingDown})))
	d1.c.Close()
	d2 := s.next(sessionwire.SessionProtocol)
	if got := d2.line(t); got != initReq {
		t.Fatalf("the next daemon got %q, want the harness's initialize", got)
	}
}

// A session that ends here (holdStdin) takes no further request: one it recorded after
// answering everything owed would be left unanswered, so the line is neither recorded nor
// sent, and the daemon's side sees the connection closed with nothing on it.
func TestEndingSessionTakesNoRequest(t *testing.T) {
	s := newScripted(t)
	conn, err := dial(s.path)
	if err != nil {
		t.Fatal(err)
	}
	d := <-s.conns
	r := newRelay(nil, io.Discard)
	r.conn, r.epoch = conn, 1
	r.holdStdin()
	r.answerAll(nil, false) // what daemonGone does next; then the shim exits
	line := []byte(testkit.ToolCall("5", "health", "") + "\n")
	m, ok := scanMessage(line)
	r.fromHarness(line, m, ok) // the harness's line read meanwhile
	if n := len(r.pending); n != 0 {
		t.Errorf("%d requests recorded after every answer was written: nobody will answer them", n)
	}
	if b, _ := io.ReadAll(d.br); len(b) != 0 {
		t.Errorf("the daemon received %q after the session ended", b)
	}
}

// A request that reuses the id of one in flight is the daemon's to refuse (-32600); the first
// keeps its place, so a crash still answers it, and a refusal the daemon could not write is
// the shim's, with the first request alone retried.
func TestRelayDuplicateIDKeepsTheFirstRequest(t *testing.T) {
	s := newScripted(t)
	h, d1 := startRelay(t, s)
	openSession(t, h, d1)
	h.send(t, writeReq)
	h.send(t, strings.Replace(writeReq, "run_sweep", "health", 1)) // id 3 again
	d1.line(t)
	d1.line(t)
	d1.write(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"request ID 3 already in use"}}`+"\n")
	if got := h.next(t); !strings.Contains(got, "already in use") {
		t.Fatalf("the daemon's refusal: %q", got)
	}
	d1.c.Close() // the crash, with the first id 3 in flight
	if got := h.next(t); !strings.Contains(got, `"id":3,`) || !strings.Contains(got, "whether it took effect is unknown") {
		t.Fatalf("the write in flight, after its id was reused: %q", got)
	}

	d2 := s.next(sessionwire.SessionProtocol)
	replay := d2.line(t)
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(replay), &m) != nil {
		t.Fatalf("replay %q", replay)
	}
	d2.write(t, `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{}}`+"\n")
	if got := d2.line(t); got != initNote {
		t.Fatalf("new daemon got %q", got)
	}
	// Now the daemon dies before refusing the second of two reads under id 2.
	h.send(t, readReq)
	h.send(t, readReq)
	d2.line(t)
	d2.line(t)
	d2.c.Close()
	if got := h.next(t); !strings.Contains(got, `"id":2,"error":{"code":-32600`) {
		t.Fatalf("the refusal the daemon never wrote: %q", got)
	}
	d3 := s.next(sessionwire.SessionProtocol)
	d3.line(t) // the replay
	d3.line(t) // initialized
	if got := d3.line(t); got != readReq {
		t.Fatalf("the first read, retried once: %q", got)
	}
	d3.write(t, `{"jsonrpc":"2.0","id":2,"result":{"again":true}}`+"\n")
	if got := h.next(t); !strings.Contains(got, `"id":2,"result":{"again":true}`) {
		t.Fatalf("the retried read's answer: %q", got)
	}
	// Nothing more is owed: the harness hangs up and the shim ends normally. The daemon closes
	// once it has seen the session's end (the shim's half-close), as a real one does: closed
	// before, it would read as a crash with the harness still there, and the shim reconnects.
	h.in.Close()
	d3.eof(t)
	d3.c.Close()
	if code := <-h.code; code != 0 {
		t.Fatalf("exit %d", code)
	}
}
