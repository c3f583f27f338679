package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// socketPair is a connected pair of Unix sockets: the daemon's end and the client's.
func socketPair(t *testing.T) (server, client *net.UnixConn) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(testkit.ShortTempDir(t), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *net.UnixConn, 1)
	go func() {
		c, _ := ln.AcceptUnix()
		accepted <- c
	}()
	client, err = net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// countingConn counts Close calls on the daemon's end.
type countingConn struct {
	*net.UnixConn
	closes atomic.Int32
}

func (c *countingConn) Close() error { c.closes.Add(1); return c.UnixConn.Close() }

func newTestLineConn(t *testing.T) (*lineConn, *countingConn, *net.UnixConn, *bufio.Reader) {
	t.Helper()
	s, c := socketPair(t)
	cc := &countingConn{UnixConn: s}
	mc, err := (&lineTransport{c: cc, br: bufio.NewReaderSize(cc, 4096), frameLimit: testFrameLimit}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lc := mc.(*lineConn)
	t.Cleanup(func() { _ = lc.Close() })
	_ = c.SetDeadline(time.Now().Add(lineConnLimit))
	return lc, cc, c, bufio.NewReader(c)
}

// testFrameLimit is newTestLineConn's line bound: small enough that lines over it cost the
// race detector milliseconds.
const testFrameLimit = 256 << 10

// Without a limit of its own a connection takes the request bound every reader of a
// harness's lines has (sessionwire.MaxRequestLine).
func TestLineConnDefaultFrameLimitIsTheRequestBound(t *testing.T) {
	s, _ := socketPair(t)
	mc, err := (&lineTransport{c: s, br: bufio.NewReader(s)}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if got := mc.(*lineConn).lines.Limit(); got != sessionwire.MaxRequestLine {
		t.Fatalf("default frame limit %d", got)
	}
}

// lineConnLimit bounds a line-transport test; generous, since moving tens of MiB under -race
// on a loaded machine takes tens of seconds, and it is only ever reached by a hang.
const lineConnLimit = 2 * time.Minute

func readCtx(t *testing.T) context.Context { return testkit.Context(t, lineConnLimit) }

// errReply is a decoded error line.
type errReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readReply(t *testing.T, br *bufio.Reader) errReply {
	t.Helper()
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v", err)
	}
	var r errReply
	if err := json.Unmarshal(line, &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("reply %q is not JSON-RPC: %v", line, err)
	}
	return r
}

// Every kind of bad line gets its own error reply, in order, and the session reads on to the
// valid request after them; blank lines and "\r\n" endings are accepted silently.
func TestLineConnAnswersBadLinesAndContinues(t *testing.T) {
	lc, _, client, br := newTestLineConn(t)
	type bad struct {
		line, id string
		code     int
		says     string
	}
	bads := []bad{
		{`this is not json`, "null", -32700, "Parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, "null", -32700, "Parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} {"x":1}`, "null", -32700, "Parse error"},
		{`42`, "null", -32600, "JSON object"},
		{`"a string"`, "null", -32600, "JSON object"},
		{`null`, "null", -32600, "JSON object"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "null", -32600, "batches are not supported"},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, "7", -32600, `"jsonrpc" must be "2.0"`},
		{`{"id":"s","method":"ping"}`, `"s"`, -32600, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600, `"id" must be`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", -32600, `"id" must be`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600, `"id" must be`},
		{`{"jsonrpc":"2.0","id":8,"method":3}`, "8", -32600, `"method" must be a string`},
		{`{"jsonrpc":"2.0","result":{}}`, "null", -32600, `must be a response with an "id"`},
		{`{"jsonrpc":"2.0","id":9,"error":"boom"}`, "9", -32600, `"error" must be an error object`},
	}
	var in bytes.Buffer
	for _, b := range bads {
		in.WriteString(b.line + "\n\n   \r\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"tools/list","params":{}}` + "\r\n")
	if _, err := client.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	msg, err := lc.Read(readCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/list" || req.ID.Raw() != "last" || string(req.Params) != "{}" {
		t.Fatalf("the valid request after the bad lines: %#v", msg)
	}
	for _, b := range bads {
		r := readReply(t, br)
		if r.Error == nil || r.Error.Code != b.code || string(r.ID) != b.id || !strings.Contains(r.Error.Message, b.says) {
			t.Errorf("line %q: reply id %s error %+v, want id %s code %d saying %q", b.line, r.ID, r.Error, b.id, b.code, b.says)
		}
	}
}

// The parse error line is exactly the JSON-RPC 2.0 one.
func TestLineConnParseErrorBytes(t *testing.T) {
	lc, _, client, br := newTestLineConn(t)
	if _, err := client.Write([]byte("{oops\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if msg, err := lc.Read(readCtx(t)); err != nil || msg.(*jsonrpc.Request).ID.IsValid() {
		t.Fatalf("notification: %#v %v", msg, err)
	}
	line, _ := br.ReadString('\n')
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n"; line != want {
		t.Fatalf("parse error line %q, want %q", line, want)
	}
}

// A message of many times the kept buffer is read whole; a line over the bound is thrown away with an
// error reply, the bytes after it are read as the next message, and the connection does not
// keep the big buffers afterwards.
func TestLineConnHugeAndOverlongLines(t *testing.T) {
	t.Parallel()
	lc, _, client, br := newTestLineConn(t)
	big := strings.Repeat("x", testFrameLimit/2)
	tooBig := strings.Repeat("y", testFrameLimit+64<<10)
	go func() {
		w := bufio.NewWriter(client)
		_, _ = w.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"blob":"` + big + `"}}` + "\n")
		_, _ = w.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"blob":"` + tooBig + `"}}` + "\n")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
		_ = w.Flush()
	}()
	ctx := readCtx(t)
	msg, err := lc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := msg.(*jsonrpc.Request); r.ID.Raw() != int64(1) || string(r.Params) != `{"blob":"`+big+`"}` {
		t.Fatalf("the message under the limit was not read whole")
	}
	msg, err = lc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := msg.(*jsonrpc.Request); r.ID.Raw() != int64(3) || r.Method != "ping" {
		t.Fatalf("after the over-long line: %#v", msg)
	}
	r := readReply(t, br)
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "longer than") {
		t.Fatalf("over-long line answered %+v", r.Error)
	}
}

// An over-long last line with no newline before EOF is answered, then EOF ends the session.
func TestLineConnOverlongAtEOF(t *testing.T) {
	t.Parallel() // CPU-bound under -race: overlaps the end-to-end tests' waits
	lc, _, client, br := newTestLineConn(t)
	go func() {
		_, _ = client.Write(bytes.Repeat([]byte("z"), testFrameLimit+10))
		_ = client.CloseWrite()
	}()
	if _, err := lc.Read(readCtx(t)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after an over-long last line: %v", err)
	}
	if r := readReply(t, br); r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("reply %+v", r.Error)
	}
}

// A last line without a newline is still a message. After the client's EOF, Read holds the
// end of the session back until that request is answered, so the answer is not dropped.
func TestLineConnPartialLastLineAndDrain(t *testing.T) {
	t.Parallel() // CPU-bound under -race: overlaps the end-to-end tests' waits
	lc, _, client, br := newTestLineConn(t)
	if _, err := client.Write([]byte(`{"jsonrpc":"2.0","id":"tail","method":"tools/call","params":{"name":"health"}}`)); err != nil {
		t.Fatal(err)
	}
	_ = client.CloseWrite()
	ctx := readCtx(t)
	msg, err := lc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := msg.(*jsonrpc.Request)
	if req.ID.Raw() != "tail" {
		t.Fatalf("partial last line: %#v", req)
	}
	ended := make(chan error, 1)
	go func() { _, err := lc.Read(ctx); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("the session ended (%v) with a request unanswered", err)
	case <-time.After(100 * time.Millisecond): // a wrong early EOF shows up at once
	}
	if err := lc.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; !errors.Is(err, io.EOF) {
		t.Fatalf("after the answer: %v, want EOF", err)
	}
	line, _ := br.ReadString('\n')
	if line != `{"jsonrpc":"2.0","id":"tail","result":{"ok":true}}`+"\n" {
		t.Fatalf("answer %q", line)
	}
}

// Many goroutines write at once: every message arrives whole, on its own line.
func TestLineConnConcurrentWrites(t *testing.T) {
	t.Parallel() // CPU-bound under -race: overlaps the end-to-end tests' waits
	lc, _, client, br := newTestLineConn(t)
	const writers, each = 8, 20
	payload := strings.Repeat("p", 20000) // larger than a socket write chunk
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id, _ := jsonrpc.MakeID(fmt.Sprintf("w%d-%d", w, i))
				res, _ := json.Marshal(map[string]string{"p": payload})
				var msg jsonrpc.Message = &jsonrpc.Response{ID: id, Result: res}
				if i%3 == 0 { // the SDK encoder's path too
					msg = &jsonrpc.Request{Method: "notifications/message", Params: res}
				}
				errs <- lc.Write(context.Background(), msg)
			}
		}()
	}
	seen := map[string]bool{}
	notes := 0
	for n := 0; n < writers*each; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     string
			Method string
			Result struct{ P string }
			Params struct{ P string }
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("a garbled line (%d bytes): %v", len(line), err)
		}
		if m.Result.P != payload && m.Params.P != payload {
			t.Fatalf("a message lost its payload")
		}
		if m.Method != "" {
			notes++
		} else if seen[m.ID] {
			t.Fatalf("id %s twice", m.ID)
		} else {
			seen[m.ID] = true
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen)+notes != writers*each {
		t.Fatalf("%d responses and %d notifications", len(seen), notes)
	}
	_ = client
}

// Close unblocks a Read, closes the socket exactly once however often it is called, and a
// cancelled context unblocks a Read too.
func TestLineConnCloseAndCancelUnblockRead(t *testing.T) {
	lc, cc, _, _ := newTestLineConn(t)
	ended := make(chan error, 1)
	go func() { _, err := lc.Read(context.Background()); ended <- err }()
	time.Sleep(20 * time.Millisecond) // let Read block (a read that had not started ends the same way)
	for i := 0; i < 3; i++ {
		if err := lc.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("Read returned a message after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if n := cc.closes.Load(); n != 1 {
		t.Fatalf("the socket was closed %d times", n)
	}
	if lc.SessionID() != "" {
		t.Fatal("a session id on a stream transport")
	}

	lc2, _, _, _ := newTestLineConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := lc2.Read(ctx); ended <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not unblock Read")
	}
}

// decodeFrame agrees with the SDK's decoder on every message both accept.
func TestDecodeFrameAgreesWithSDK(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"health","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-3,"method":""}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}`,
		`{"jsonrpc":"2.0","id":"r","error":{"code":-1,"message":"m","data":{"k":1}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{},"extra":true}`,
		// Keys match exactly, as in the SDK: a wrong-cased "method" makes this a response
		// (to nothing), never a call; a wrong-cased "id" makes a notification.
		`{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"create_watch_profile","arguments":{"name":"X"}}}`,
		`{"jsonrpc":"2.0","ID":8,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","Params":{"name":"health"}}`,
	} {
		got, reply := decodeFrame([]byte(in))
		if reply != nil {
			t.Errorf("%s refused: %s", in, reply)
			continue
		}
		want, err := jsonrpc.DecodeMessage([]byte(in))
		if err != nil {
			t.Fatalf("the SDK refuses %s: %v", in, err)
		}
		g, _ := jsonrpc.EncodeMessage(got)
		w, _ := jsonrpc.EncodeMessage(want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s: decoded as %s, the SDK %s", in, g, w)
		}
	}
}

// The transport carries a real MCP session: an SDK client on the other end initializes
// and lists tools through it.
func TestLineTransportCarriesMCP(t *testing.T) {
	s, c := socketPair(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ S string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.S}}}, nil, nil
	})
	ctx := readCtx(t)
	ss, err := srv.Connect(ctx, &lineTransport{c: s, br: bufio.NewReader(s)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"S": "héllo\n<>"}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "héllo\n<>" {
		t.Fatalf("echo: %+v %v", res, err)
	}
}

// B4: the daemon's drain after a half-close follows its request timeout: it outlasts the
// longest call (first check, a request, the wait for a new backend and the read's retry), so
// a raised --request-timeout does not cut answers off.
func TestDrainBoundFollowsTheRequestTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, 30 * time.Second, 2 * time.Minute} {
		o := &backend.UpstreamOptions{Client: &backend.ClientOptions{RequestTimeout: timeout}}
		got := drainBound(o)
		longest := backend.DefaultFirstCheckWait + 2*timeout + backend.DefaultRetryWait
		if got <= longest {
			t.Errorf("timeout %v: drain %v, want more than the longest call %v", timeout, got, longest)
		}
	}
	o := &backend.UpstreamOptions{Client: &backend.ClientOptions{RequestTimeout: 2 * time.Minute}}
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

// Integer ids are kept exactly up to ±2^53 (what the SDK's ids hold); beyond that, and for
// fractions, the request is refused with -32600 and an id of null, never answered under a
// different id.
func TestDecodeFrameKeepsIntegerIDsExactly(t *testing.T) {
	for _, c := range []struct {
		id   string
		want int64
	}{
		{"9007199254740992", 1 << 53},
		{"-9007199254740992", -1 << 53},
		{"9007199254740991", 1<<53 - 1},
		{"0", 0},
		{"-0", 0},
		{"1.0", 1},
		{"1e3", 1000},
	} {
		msg, reply := decodeFrame([]byte(`{"jsonrpc":"2.0","id":` + c.id + `,"method":"ping"}`))
		if reply != nil {
			t.Errorf("id %s refused: %s", c.id, reply)
			continue
		}
		req := msg.(*jsonrpc.Request)
		if got, ok := req.ID.Raw().(int64); !ok || got != c.want {
			t.Errorf("id %s read as %#v, want %d", c.id, req.ID.Raw(), c.want)
		}
		line, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
		want := `{"jsonrpc":"2.0","id":` + jsonNumber(c.want) + `,"result":{}}`
		if err != nil || string(line) != want {
			t.Errorf("id %s answered as %s, want %s", c.id, line, want)
		}
	}
	for _, c := range []struct{ id, says string }{
		{"9007199254740993", "2^53"},
		{"-9007199254740993", "2^53"},
		{"9223372036854775807", "2^53"},
		{"99999999999999999999", "2^53"},
		{"9007199254740994.0", "2^53"},
		{"1e400", "2^53"},
		{"1.5", `"id" must be a string, an integer or null`},
		{"-0.25", `"id" must be a string, an integer or null`},
	} {
		_, reply := decodeFrame([]byte(`{"jsonrpc":"2.0","id":` + c.id + `,"method":"ping"}`))
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if reply == nil || json.Unmarshal(reply, &r) != nil {
			t.Errorf("id %s accepted (reply %s)", c.id, reply)
			continue
		}
		if string(r.ID) != "null" || r.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(r.Error.Message, c.says) {
			t.Errorf("id %s: %s", c.id, reply)
		}
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Over a real socket: the largest exact id comes back unchanged, and the first id past it gets
// an error while the session reads on.
func TestLineConnAnswersLargeIDsExactly(t *testing.T) {
	lc, _, client, br := newTestLineConn(t)
	in := `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}` + "\n"
	if _, err := client.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	ctx := readCtx(t)
	msg, err := lc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := readReply(t, br); string(r.ID) != "null" || r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("the out-of-range id: %+v", r)
	}
	if err := lc.Write(ctx, &jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != `{"jsonrpc":"2.0","id":9007199254740992,"result":{}}`+"\n" {
		t.Fatalf("answer %q %v", line, err)
	}
}

// A request the client cancelled is no longer owed an answer (the wire layer drops it), so a
// half-close after the cancellation ends the session at once instead of waiting drainWait
// (35 s) for a response that never comes. The test's context is far shorter than drainWait;
// a Read that waited for it would return with the context done.
func TestLineConnCancelledRequestIsNotOwed(t *testing.T) {
	lc, _, client, _ := newTestLineConn(t)
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}` + "\n" +
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}` + "\n"
	if _, err := client.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(readCtx(t), 5*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		if _, err := lc.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lc.mu.Lock()
	_, owes5 := lc.pending[mustMakeID(t, 5)]
	_, owes6 := lc.pending[mustMakeID(t, 6)]
	lc.mu.Unlock()
	if owes5 || !owes6 {
		t.Fatalf("pending after the cancellation: 5=%v 6=%v", owes5, owes6)
	}
	if err := client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	// 6 is still owed: answer it, then EOF must come through.
	if err := lc.Write(ctx, &jsonrpc.Response{ID: mustMakeID(t, 6), Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Read(ctx); !errors.Is(err, io.EOF) || ctx.Err() != nil {
		t.Fatalf("Read after the half-close: %v (context: %v)", err, ctx.Err())
	}
}

func mustMakeID(t *testing.T, n int) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A request with a null id is answered (the app's server answers it; the SDK would take it for
// a notification and say nothing), and params of the wrong shape are refused in words a
// person reads, never in the decoder's Go type names.
func TestDecodeFrameAnswersNullIDsAndMisshapenParamsInWords(t *testing.T) {
	for _, c := range []struct {
		in, id string
		code   int64
		words  string
	}{
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, "null", jsonrpc.CodeInvalidRequest, `"id" is null`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, "1", jsonrpc.CodeInvalidParams, `"name" must be a string`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"health","arguments":[1]}}`, "2", jsonrpc.CodeInvalidParams, `"arguments" must be an object`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"health"}`, "3", jsonrpc.CodeInvalidParams, `"params" must be an object`},
		{`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":20250618}}`, "4", jsonrpc.CodeInvalidParams, `"protocolVersion" must be a string`},
		{`{"jsonrpc":"2.0","id":"s","method":"tools/list","params":{"_meta":[]}}`, `"s"`, jsonrpc.CodeInvalidParams, `"_meta" must be an object`},
	} {
		msg, reply := decodeFrame([]byte(c.in))
		if msg != nil || reply == nil {
			t.Errorf("%s: passed to the SDK", c.in)
			continue
		}
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(reply, &e); err != nil {
			t.Fatalf("%s: reply %s: %v", c.in, reply, err)
		}
		if string(e.ID) != c.id || e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.words) ||
			strings.Contains(e.Error.Message, "Go ") || strings.Contains(e.Error.Message, "json:") {
			t.Errorf("%s: reply %s, want id %s, code %d, saying %q in plain words", c.in, reply, c.id, c.code, c.words)
		}
	}
	// Well-shaped params, null params and null members still go to the SDK.
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health","arguments":null,"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if _, reply := decodeFrame([]byte(in)); reply != nil {
			t.Errorf("%s refused: %s", in, reply)
		}
	}
}
