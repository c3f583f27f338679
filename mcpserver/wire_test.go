package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// coreToolObjects parses a raw tools/list response line into its tool objects, keeping key order
// visible via the raw bytes.
func coreToolObjects(t *testing.T, m map[string]json.RawMessage) []json.RawMessage {
	t.Helper()
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		t.Fatalf("%v: %s", err, m["result"])
	}
	return res.Tools
}

func coreCheckToolList(t *testing.T, tools []tools.Tool, objs []json.RawMessage) {
	t.Helper()
	if len(objs) != len(tools) {
		t.Fatalf("%d tools on the wire, table has %d", len(objs), len(tools))
	}
	for i, raw := range objs {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		if obj["name"] != tools[i].Name {
			t.Fatalf("position %d: %v, want %s (table order)", i, obj["name"], tools[i].Name)
		}
		rc, ok := obj["requires_confirmation"].(bool)
		if !ok || rc != tools[i].RequiresConfirmation {
			t.Fatalf("%s: requires_confirmation %v (%T)", tools[i].Name, obj["requires_confirmation"], obj["requires_confirmation"])
		}
		schema, _ := obj["inputSchema"].(map[string]any)
		if schema["type"] != "object" || obj["description"] != tools[i].Description {
			t.Fatalf("%s: %s", tools[i].Name, raw)
		}
		if _, ok := obj["_meta"]; ok {
			t.Fatalf("%s: unexpected _meta", tools[i].Name)
		}
	}
}

// The package's own table on the wire, for every protocol version a harness negotiates with
// initialize: the 25 tools in table order, each with its flag, and no field those versions lack.
func TestWireWithThePackageTable(t *testing.T) {
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		p := coreRawServe(t, NewServer(nil, nil), tools.Tools)
		p.initialize(version)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		_, m := p.recv()
		coreCheckToolList(t, tools.Tools, coreToolObjects(t, m))
		var result map[string]json.RawMessage
		if err := json.Unmarshal(m["result"], &result); err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(result)); len(got) != 1 || got[0] != "tools" {
			t.Errorf("%s: tools/list result keys %v, want only tools", version, got)
		}
	}
}

func TestAddConfirmationKeepsBytes(t *testing.T) {
	flags := map[string]bool{"a": false, "b": true}
	order := map[string]int{"a": 0, "b": 1}
	in := `{"_meta":{"k":[1,{"tools":[]}]},"tools":[{"name":"x"},{"name":"b","inputSchema":{"type":"object"}},{},{"description":"d \u00e9 }","name":"a"}],"nextCursor":"c"}`
	out, err := addConfirmation(json.RawMessage(in), flags, order)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"k":[1,{"tools":[]}]},"tools":[{"description":"d \u00e9 }","name":"a","requires_confirmation":false},` +
		`{"name":"b","inputSchema":{"type":"object"},"requires_confirmation":true},{"name":"x"},{}],"nextCursor":"c"}`
	if string(out) != want {
		t.Fatalf("\n got %s\nwant %s", out, want)
	}
	// The cache fields the SDK adds are left out on sessions whose protocol has none.
	dropped, err := addConfirmation(json.RawMessage(`{"ttlMs":0,"cacheScope":"public","tools":[{"name":"a"}]}`), flags, order, cacheFields...)
	if err != nil || string(dropped) != `{"tools":[{"name":"a","requires_confirmation":false}]}` {
		t.Fatalf("dropped: %s %v", dropped, err)
	}
	for _, bad := range []string{`[]`, `{"x":1}`, `{"tools":{}}`, `{"tools":[1,`, `"s"`} {
		if _, err := addConfirmation(json.RawMessage(bad), flags, order); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestWithIsErrorFalse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `{"isError":false}`},
		{` { } `, `{ "isError":false}`},
		{`{"content":[]}`, `{"content":[],"isError":false}`},
		{`{"content":[{"type":"text","text":"{\"isError\":true}"}]}`, `{"content":[{"type":"text","text":"{\"isError\":true}"}],"isError":false}`},
		{`{"structuredContent":{"isError":true},"content":[]}`, `{"structuredContent":{"isError":true},"content":[],"isError":false}`},
		{`{"content":[],"isError":true}`, ``},
		{`{"isError":false,"resultType":"complete"}`, ``},
		{`[]`, ``},
		{`"s"`, ``},
		{``, ``},
	} {
		out, ok := withIsErrorFalse(json.RawMessage(c.in))
		if c.want == "" {
			if ok {
				t.Errorf("%q rewritten to %s", c.in, out)
			}
			continue
		}
		if !ok || string(out) != c.want {
			t.Errorf("%q: got %s (%v), want %s", c.in, out, ok, c.want)
		}
		if !json.Valid(out) {
			t.Errorf("%q: invalid JSON %s", c.in, out)
		}
	}
}

func TestInvalidRequestError(t *testing.T) {
	plain := errors.New("boom")
	coded := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}
	zero := &jsonrpc.Error{Message: "zero", Data: json.RawMessage(`{"k":1}`)}
	for _, c := range []struct {
		err  error
		want *jsonrpc.Error // nil: sent as it is
	}{
		{plain, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "boom"}},
		{fmt.Errorf("wrapped: %w", plain), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "wrapped: boom"}},
		{coded, nil},
		{fmt.Errorf("ctx: %w", coded), nil},
		{zero, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "zero", Data: zero.Data}},
	} {
		got := invalidRequestError(c.err)
		if (got == nil) != (c.want == nil) || got != nil && (got.Code != c.want.Code || got.Message != c.want.Message || string(got.Data) != string(c.want.Data)) {
			t.Errorf("%v: got %+v, want %+v", c.err, got, c.want)
		}
	}
}

// scriptedConn is an mcp.Connection whose reads the test scripts and whose writes it records.
type scriptedConn struct {
	in     chan jsonrpc.Message
	mu     sync.Mutex
	out    []jsonrpc.Message
	closed chan struct{}
	once   sync.Once
}

func newScriptedConn() *scriptedConn {
	return &scriptedConn{in: make(chan jsonrpc.Message, 16), closed: make(chan struct{})}
}

func (c *scriptedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *scriptedConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.mu.Lock()
	c.out = append(c.out, m)
	c.mu.Unlock()
	return nil
}

func (c *scriptedConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

func (c *scriptedConn) SessionID() string { return "" }

func (c *scriptedConn) written() []jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]jsonrpc.Message(nil), c.out...)
}

type scriptedTransport struct{ c *scriptedConn }

func (t scriptedTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The wire layer drops the response to a request the client cancelled while it was in
// flight, and only that one: not a response that went out before the cancellation, not an
// initialize's (which MCP forbids cancelling), and it forgets every id once answered.
func TestWireDropsResponsesToCancelledRequests(t *testing.T) {
	ctx := backendtest.Context(t)
	sc := newScriptedConn()
	mc, err := WrapTransport(scriptedTransport{sc}, coreTools()).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wc := mc.(*wireConn)
	read := func(m jsonrpc.Message) {
		t.Helper()
		sc.in <- m
		if got, err := wc.Read(ctx); err != nil || got != m {
			t.Fatalf("read %v %v", got, err)
		}
	}
	cancel := func(requestID string) {
		read(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":` + requestID + `,"reason":"user"}`)})
	}
	answer := func(id jsonrpc.ID) {
		t.Helper()
		if err := wc.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(id jsonrpc.ID, method string) {
		read(&jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(`{}`)})
	}

	init, slow, fast, other, str := mustID(t, float64(1)), mustID(t, float64(9)), mustID(t, float64(10)), mustID(t, float64(11)), mustID(t, "s")
	call(init, "initialize")
	cancel(`1`)
	call(slow, "tools/call")
	call(str, "tools/call")
	call(fast, "ping")
	answer(fast) // answered before its cancellation arrives
	cancel(`10`)
	cancel(`9`)
	cancel(`"s"`)
	cancel(`9.5`)    // no request's id
	cancel(`"nope"`) // not in flight: ignored, not remembered
	call(other, "tools/call")
	answer(slow)
	answer(str)
	answer(other)
	answer(init)

	var ids []any
	for _, m := range sc.written() {
		ids = append(ids, m.(*jsonrpc.Response).ID.Raw())
	}
	if fmt.Sprint(ids) != fmt.Sprint([]any{int64(10), int64(11), int64(1)}) {
		t.Fatalf("responses written for ids %v, want [10 11 1]", ids)
	}
	wc.mu.Lock()
	left := len(wc.inflight)
	wc.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d ids still remembered after every response", left)
	}
	// The same id reused after its cancelled request was answered is a new request.
	call(slow, "tools/call")
	answer(slow)
	if n := len(sc.written()); n != 4 {
		t.Fatalf("a reused id's response was dropped: %d responses", n)
	}
}

// End to end through the SDK: a tool call cancelled by the client gets no response, and the
// session goes on answering.
func TestWireCancelledToolCallGetsNoResponse(t *testing.T) {
	started := make(chan struct{}, 1)
	returned := make(chan struct{}, 1)
	tools := append(coreTools(), tools.Tool{Row: toolfacts.Row{Name: "wait_for_cancel", Description: "blocks until cancelled",
		InputSchema: map[string]any{"type": "object"}},
		Handler: func(ctx context.Context, _ backend.API, _ map[string]any) (any, error) {
			defer func() { returned <- struct{}{} }()
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	p.initialize("2025-06-18")
	ctx := backendtest.Context(t)
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("the tool never %s", what)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait_for_cancel","arguments":{}}}`)
	wait(started, "started")
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
	wait(returned, "saw the cancellation")
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	p.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"bibtex","arguments":{}}}`)
	// Both are answered, in either order (the SDK serves requests concurrently; a client
	// matches answers by id), and 9 never is.
	got := map[string]bool{}
	for range 2 {
		line, m := p.recv()
		if string(m["id"]) == "9" {
			t.Fatalf("the cancelled call was answered: %s", line)
		}
		got[string(m["id"])] = true
	}
	if !got["10"] || !got["11"] {
		t.Fatalf("answers to %v, want 10 and 11", got)
	}
}
