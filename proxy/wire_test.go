package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

func coreCheckToolList(t *testing.T, tools []Tool, objs []json.RawMessage) {
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

func TestWireAddsRequiresConfirmation(t *testing.T) {
	tools := coreTools()
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	init := p.initialize("2025-06-18")
	var ir struct {
		ProtocolVersion string            `json:"protocolVersion"`
		ServerInfo      map[string]string `json:"serverInfo"`
		Capabilities    map[string]any    `json:"capabilities"`
	}
	if err := json.Unmarshal(init["result"], &ir); err != nil {
		t.Fatal(err)
	}
	if ir.ProtocolVersion != "2025-06-18" || ir.ServerInfo["name"] != "resmon" || ir.ServerInfo["version"] != "2.3" {
		t.Fatalf("%s", init["result"])
	}
	if caps, _ := json.Marshal(ir.Capabilities); string(caps) != `{"tools":{}}` {
		t.Fatalf("capabilities %s", caps)
	}

	// String and numeric ids, twice each: every tools/list response is rewritten.
	for _, id := range []string{`2`, `"list-a"`, `3`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`)
		line, m := p.recv()
		if string(m["id"]) != id {
			t.Fatalf("id %s, want %s", m["id"], id)
		}
		coreCheckToolList(t, tools, coreToolObjects(t, m))
		if strings.Count(line, `"requires_confirmation"`) != len(tools) {
			t.Fatalf("%s", line)
		}
	}

	// A tools/call response is not touched: no requires_confirmation, isError only on errors.
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bibtex"}}`)
	line, m := p.recv()
	if strings.Contains(line, "requires_confirmation") || strings.Contains(line, "structuredContent") {
		t.Fatalf("%s", line)
	}
	var res struct {
		Content []map[string]any `json:"content"`
		IsError *bool            `json:"isError"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 || res.Content[0]["type"] != "text" {
		t.Fatalf("%s", line)
	}
	if res.IsError != nil && *res.IsError {
		t.Fatalf("%s", line)
	}

	// Unknown tools and non-object arguments answer with isError results, not protocol errors.
	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	line, m = p.recv()
	if _, isErr := m["error"]; isErr || !strings.Contains(line, `"isError":true`) || !strings.Contains(line, `Unknown tool 'nope'.`) {
		t.Fatalf("%s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"zeta_echo","arguments":[1,2]}}`)
	line, _ = p.recv()
	if !strings.Contains(line, `"isError":true`) || !strings.Contains(line, `Tool arguments must be a JSON object.`) {
		t.Fatalf("%s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zeta_echo","arguments":null}}`)
	line, _ = p.recv()
	if strings.Contains(line, `"isError":true`) || !strings.Contains(line, `{\"args\":{},\"types\":{}}`) {
		t.Fatalf("%s", line)
	}
}

func TestWireWithThePackageTable(t *testing.T) {
	if len(Tools) == 0 {
		t.Skip("the tool table is empty")
	}
	p := coreRawServe(t, NewServer(nil, nil), Tools)
	p.initialize("2025-11-25")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	_, m := p.recv()
	coreCheckToolList(t, Tools, coreToolObjects(t, m))
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
	for _, bad := range []string{`[]`, `{"x":1}`, `{"tools":{}}`, `{"tools":[1,`, `"s"`} {
		if _, err := addConfirmation(json.RawMessage(bad), flags, order); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A successful tools/call result carries "isError":false on the wire, once and at the top
// level; an error result keeps its true, and other responses gain nothing.
func TestWireToolCallCarriesIsErrorFalse(t *testing.T) {
	tools := coreTools()
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	p.initialize("2025-06-18")

	// The arguments put the key's name in the result's text: escaped there, it must not be
	// mistaken for the top-level key.
	for i, id := range []string{`2`, `"call-b"`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"zeta_echo","arguments":{"isError":` + fmt.Sprint(i) + `}}}`)
		line, m := p.recv()
		if string(m["id"]) != id {
			t.Fatalf("id %s, want %s", m["id"], id)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(m["result"], &res); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if string(res["isError"]) != "false" || strings.Count(line, `"isError"`) != 1 || !strings.Contains(line, `\"isError\"`) {
			t.Fatalf("successful call: %s", line)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fails","arguments":{}}}`)
	line, _ := p.recv()
	if !strings.Contains(line, `"isError":true`) || strings.Contains(line, `"isError":false`) {
		t.Fatalf("failed call: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if line, _ := p.recv(); strings.Contains(line, "isError") {
		t.Fatalf("ping: %s", line)
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

// Errors the SDK would send with code 0 go out as -32600, their message kept: a second
// initialize, and a request before initialization.
func TestWireCodeZeroErrorsBecomeInvalidRequest(t *testing.T) {
	tools := coreTools()
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	p.send(`{"jsonrpc":"2.0","id":"early","method":"tools/list"}`)
	_, m := p.recv()
	checkWireError(t, m, `"early"`, jsonrpc.CodeInvalidRequest, "invalid during session initialization")

	p.initialize("2025-06-18")
	p.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	_, m = p.recv()
	checkWireError(t, m, `7`, jsonrpc.CodeInvalidRequest, `duplicate "initialize"`)

	// Errors with a code of their own keep it.
	p.send(`{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`)
	_, m = p.recv()
	checkWireError(t, m, `8`, jsonrpc.CodeMethodNotFound, "")
}

func checkWireError(t *testing.T, m map[string]json.RawMessage, id string, code int64, says string) {
	t.Helper()
	var e struct {
		Code    *int64 `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code == nil {
		t.Fatalf("not an error response: %v %s", err, m["error"])
	}
	if string(m["id"]) != id || *e.Code != code || !strings.Contains(e.Message, says) {
		t.Fatalf("id %s error %s; want id %s, code %d, a message with %q", m["id"], m["error"], id, code, says)
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
	ctx := coreCtx(t)
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
	tools := append(coreTools(), Tool{Name: "wait_for_cancel", Description: "blocks until cancelled",
		InputSchema: map[string]any{"type": "object"},
		Handler: func(ctx context.Context, _ API, _ map[string]any) (any, error) {
			defer func() { returned <- struct{}{} }()
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	p.initialize("2025-06-18")
	ctx := coreCtx(t)
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
	for _, want := range []string{"10", "11"} {
		line, m := p.recv()
		if string(m["id"]) == "9" {
			t.Fatalf("the cancelled call was answered: %s", line)
		}
		if string(m["id"]) != want {
			t.Fatalf("got %s, want the response to %s", line, want)
		}
	}
}
