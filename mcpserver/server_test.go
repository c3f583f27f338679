package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// coreLeakToken is registered with scrub; the "leak" tool tries to return it.
const coreLeakToken = "h3aLeakTokenQ9x_Zr7VbN2mK4pL8sT1wY6cD0fH3jA5eG"

func init() { scrub.Add(coreLeakToken) }

func coreTools() []tools.Tool {
	obj := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}, "s": map[string]any{"type": "string"}}}
	return []tools.Tool{
		{Row: toolfacts.Row{Name: "zeta_echo", Description: "echoes", InputSchema: obj}, Handler: func(ctx context.Context, api backend.API, args map[string]any) (any, error) {
			types := map[string]string{}
			for k, v := range args {
				types[k] = fmt.Sprintf("%T", v)
			}
			return map[string]any{"args": args, "types": types}, nil
		}},
		{Row: toolfacts.Row{Name: "alpha_boom", Description: "panics", InputSchema: obj}, Handler: func(_ context.Context, _ backend.API, args map[string]any) (any, error) {
			var none []int
			return none[len(args)], nil // index out of range: a runtime panic
		}},
		{Row: toolfacts.Row{Name: "fails", Description: "plain error", InputSchema: obj}, Handler: func(context.Context, backend.API, map[string]any) (any, error) {
			return nil, errors.New("secret internals at /home/x")
		}},
		{Row: toolfacts.Row{Name: "not_found", Description: "tool error", InputSchema: obj}, Handler: func(context.Context, backend.API, map[string]any) (any, error) {
			return nil, fmt.Errorf("wrapped: %w", backend.NewError(backend.CodeNotFound, "Routine not found", nil))
		}},
		{Row: toolfacts.Row{Name: "backend", Description: "calls the API", InputSchema: obj}, Handler: func(ctx context.Context, api backend.API, _ map[string]any) (any, error) {
			return api.Call(ctx, &backend.Request{Method: "GET", Path: "/api/health"})
		}},
		{Row: toolfacts.Row{Name: "leak", Description: "returns the token", InputSchema: obj}, Handler: func(context.Context, backend.API, map[string]any) (any, error) {
			return map[string]any{"echo": "x" + coreLeakToken + "y", "html": "<b>&</b>"}, nil
		}},
		{Row: toolfacts.Row{Name: "bibtex", Description: "returns a string", InputSchema: obj}, Handler: func(context.Context, backend.API, map[string]any) (any, error) {
			return "@article{a,\n title={T}}", nil
		}},
		{Row: toolfacts.Row{Name: "create_thing", Description: "a write", InputSchema: obj, RequiresConfirmation: true, Destructive: false, Idempotent: false, OpenWorld: true},
			Handler: func(context.Context, backend.API, map[string]any) (any, error) {
				return map[string]any{"created": true}, nil
			}},
		{Row: toolfacts.Row{Name: "overwrite_thing", Description: "a destructive write", InputSchema: obj, RequiresConfirmation: true, Destructive: true, Idempotent: true},
			Handler: func(context.Context, backend.API, map[string]any) (any, error) { return nil, nil }},
	}
}

// coreConnect serves srv over wrapped in-memory transports and returns a go-sdk client session.
func coreConnect(t *testing.T, srv *mcp.Server, tools []tools.Tool, version string) *mcp.ClientSession {
	t.Helper()
	ctx := backendtest.Context(t)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, WrapTransport(st, tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	var copts *mcp.ClientSessionOptions
	if version != "" {
		copts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, ct, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestServerNegotiatesLegacyVersions(t *testing.T) {
	tools := coreTools()
	srv := NewServer(nil, &ServerOptions{Tools: tools})
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			cs := coreConnect(t, srv, tools, v)
			ir := cs.InitializeResult()
			if ir.ProtocolVersion != v {
				t.Fatalf("negotiated %q", ir.ProtocolVersion)
			}
			if ir.ServerInfo == nil || ir.ServerInfo.Name != "resmon" || ir.ServerInfo.Version != "2.3" {
				t.Fatalf("serverInfo %+v", ir.ServerInfo)
			}
			if ir.Capabilities == nil || ir.Capabilities.Tools == nil || ir.Capabilities.Tools.ListChanged {
				t.Fatalf("capabilities %+v", ir.Capabilities)
			}
			if ir.Instructions != Instructions(tools) {
				t.Fatalf("instructions %q", ir.Instructions)
			}
			res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "bibtex"})
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}

func TestServerDefaultProtocolPath(t *testing.T) {
	// The go-sdk client's default (the stateless 2026 protocol) also works through the wrapper.
	tools := coreTools()
	cs := coreConnect(t, NewServer(nil, &ServerOptions{Tools: tools}), tools, "")
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "zeta_echo", Arguments: map[string]any{"n": 3}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	lt, err := cs.ListTools(backendtest.Context(t), nil)
	if err != nil || len(lt.Tools) != len(tools) {
		t.Fatalf("%v %d tools", err, len(lt.Tools))
	}
}

func coreText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	if res.StructuredContent != nil {
		t.Fatal("structuredContent present")
	}
	return tc.Text
}

func coreCallErr(t *testing.T, cs *mcp.ClientSession, name string, args any) (wireError, string) {
	t.Helper()
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	text := coreText(t, res)
	if !res.IsError {
		t.Fatalf("%s: not an error: %s", name, text)
	}
	var we wireError
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&we); err != nil || we.Detail == nil {
		t.Fatalf("%s: error payload %s (%v)", name, text, err)
	}
	return we, text
}

func TestServerResults(t *testing.T) {
	tools := coreTools()
	cs := coreConnect(t, NewServer(nil, &ServerOptions{Tools: tools}), tools, "2025-06-18")
	ctx := backendtest.Context(t)

	t.Run("success text is the JSON payload; numbers stay exact", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "zeta_echo", Arguments: map[string]any{"n": 9007199254740993, "s": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
		text := coreText(t, res)
		if !strings.Contains(text, `"n":9007199254740993`) || !strings.Contains(text, `"n":"json.Number"`) || !strings.Contains(text, `"s":"string"`) {
			t.Fatalf("%s", text)
		}
	})
	t.Run("missing arguments are {}", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "zeta_echo"})
		if err != nil || res.IsError || coreText(t, res) != `{"args":{},"types":{}}` {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("a string payload is a JSON string literal", func(t *testing.T) {
		res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bibtex"})
		if got := coreText(t, res); got != `"@article{a,\n title={T}}"` {
			t.Fatalf("%s", got)
		}
	})
	t.Run("null payload", func(t *testing.T) {
		res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "overwrite_thing"})
		if got := coreText(t, res); got != `null` || res.IsError {
			t.Fatalf("%s", got)
		}
	})
	t.Run("tool error", func(t *testing.T) {
		we, text := coreCallErr(t, cs, "not_found", nil)
		if text != `{"error":"not_found","message":"Routine not found","detail":{}}` {
			t.Fatalf("%s (%+v)", text, we)
		}
	})
	t.Run("panic is internal_error without a trace", func(t *testing.T) {
		we, text := coreCallErr(t, cs, "alpha_boom", map[string]any{})
		if we.Error != backend.CodeInternalError || we.Message != "The resmon MCP server failed handling 'alpha_boom'." {
			t.Fatalf("%s", text)
		}
		if r, _ := we.Detail["reason"].(string); r == "" || strings.Contains(text, "goroutine") || strings.Contains(text, ".go:") {
			t.Fatalf("%s", text)
		}
	})
	t.Run("plain error is internal_error and hides its text", func(t *testing.T) {
		we, text := coreCallErr(t, cs, "fails", nil)
		if we.Error != backend.CodeInternalError || we.Detail["reason"] != "errors.errorString" || strings.Contains(text, "secret internals") {
			t.Fatalf("%s", text)
		}
	})
	t.Run("non-object arguments", func(t *testing.T) {
		for _, args := range []any{[]any{1, 2}, "str", 7, true} {
			we, text := coreCallErr(t, cs, "zeta_echo", args)
			if we.Error != backend.CodeInvalidArgument || we.Message != "Tool arguments must be a JSON object." {
				t.Fatalf("%v: %s", args, text)
			}
		}
	})
	t.Run("unknown tool is an isError result", func(t *testing.T) {
		we, text := coreCallErr(t, cs, "nope", nil)
		if text != `{"error":"invalid_argument","message":"Unknown tool 'nope'.","detail":{}}` {
			t.Fatalf("%s (%+v)", text, we)
		}
	})
	t.Run("token is scrubbed, HTML not escaped", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "leak"})
		if err != nil {
			t.Fatal(err)
		}
		text := coreText(t, res)
		if strings.Contains(text, coreLeakToken) || !strings.Contains(text, `"x[redacted]y"`) || !strings.Contains(text, `"<b>&</b>"`) {
			t.Fatalf("%s", text)
		}
	})
}

func TestServerAnnotations(t *testing.T) {
	tools := coreTools()
	cs := coreConnect(t, NewServer(nil, &ServerOptions{Tools: tools}), tools, "2025-11-25")
	lt, err := cs.ListTools(backendtest.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range lt.Tools {
		byName[tl.Name] = tl
	}
	for _, row := range tools {
		a := byName[row.Name].Annotations
		if a == nil || a.OpenWorldHint == nil || *a.OpenWorldHint != row.OpenWorld {
			t.Fatalf("%s: %+v", row.Name, a)
		}
		if !row.RequiresConfirmation {
			if !a.ReadOnlyHint {
				t.Errorf("%s: read not readOnly", row.Name)
			}
			continue
		}
		if a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint != row.Destructive || a.IdempotentHint != row.Idempotent {
			t.Errorf("%s: %+v", row.Name, a)
		}
	}
}

type coreRecords struct {
	mu   sync.Mutex
	recs []CallRecord
}

func (r *coreRecords) add(_ context.Context, rec CallRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

func TestServerOnCall(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	gen := src.Set(f.Backend(), nil)
	up := backend.NewUpstream(src, backendtest.Patient)
	defer up.Close()
	tools := coreTools()
	recs := &coreRecords{}
	cs := coreConnect(t, NewServer(up, &ServerOptions{Tools: tools, OnCall: recs.add}), tools, "2025-06-18")
	for _, name := range []string{"backend", "create_thing", "alpha_boom", "nope"} {
		if _, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	recs.mu.Lock()
	defer recs.mu.Unlock()
	if len(recs.recs) != 4 {
		t.Fatalf("%d records", len(recs.recs))
	}
	r := recs.recs[0]
	wantInfo := backend.CallInfo{Generation: gen, RuntimeID: f.RuntimeID, BaseURL: f.Server.URL, Requests: 1}
	if r.Tool != "backend" || r.Write || r.Code != "" || r.Info != wantInfo || r.Duration <= 0 {
		t.Fatalf("%+v", r)
	}
	if r := recs.recs[1]; r.Tool != "create_thing" || !r.Write || r.Code != "" || r.Info.Requests != 0 {
		t.Fatalf("%+v", r)
	}
	if r := recs.recs[2]; r.Tool != "alpha_boom" || r.Code != backend.CodeInternalError {
		t.Fatalf("%+v", r)
	}
	// An unknown tool is recorded under one bucket; the client's name only as Requested.
	if r := recs.recs[3]; r.Tool != UnknownTool || r.Requested != "nope" || r.Code != backend.CodeInvalidArgument || r.Write {
		t.Fatalf("%+v", r)
	}
}

func TestServerBackendUnavailableResult(t *testing.T) {
	src := backendtest.NewSource()
	src.Set(nil, &discovery.Unavailable{Reason: discovery.ReasonNotRunning,
		Message: "resmon is not running. Start the resmon app and try again.", Tried: []string{"http://127.0.0.1:8791"}})
	up := backend.NewUpstream(src, backendtest.Patient)
	tools := coreTools()
	cs := coreConnect(t, NewServer(up, &ServerOptions{Tools: tools}), tools, "2025-06-18")
	_, text := coreCallErr(t, cs, "backend", nil)
	want := `{"error":"backend_unavailable","message":"resmon is not running. Start the resmon app and try again.","detail":{"tried":["http://127.0.0.1:8791"]}}`
	if text != want {
		t.Fatalf("%s", text)
	}
}

// coreRawPeer speaks raw newline-delimited JSON-RPC to a server, to see the exact wire bytes
// (the go-sdk client drops fields it does not know, such as requires_confirmation).
type coreRawPeer struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func coreRawServe(t *testing.T, srv *mcp.Server, tools []tools.Tool) *coreRawPeer {
	t.Helper()
	client, server := net.Pipe()
	ss, err := srv.Connect(backendtest.Context(t), WrapTransport(&mcp.IOTransport{Reader: server, Writer: server}, tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		_ = ss.Wait()
	})
	return &coreRawPeer{t: t, conn: client, r: bufio.NewReaderSize(client, 1<<20)}
}

func (p *coreRawPeer) send(line string) {
	p.t.Helper()
	_ = p.conn.SetWriteDeadline(time.Now().Add(backendtest.Timeout))
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

func (p *coreRawPeer) recv() (string, map[string]json.RawMessage) {
	p.t.Helper()
	_ = p.conn.SetReadDeadline(time.Now().Add(backendtest.Timeout))
	line, err := p.r.ReadString('\n')
	if err != nil {
		p.t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		p.t.Fatalf("%v: %s", err, line)
	}
	return line, m
}

func (p *coreRawPeer) initialize(version string) map[string]json.RawMessage {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	_, m := p.recv()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// A client-chosen name is cut to MaxRequestedName bytes on a rune boundary and made
// valid UTF-8 before it may be logged.
func TestShortName(t *testing.T) {
	if got := shortName("health"); got != "health" {
		t.Errorf("short name changed: %q", got)
	}
	long := strings.Repeat("é", 100) // 2 bytes each: byte 64 is a rune start
	got := shortName("x" + long)     // now byte 64 is inside a rune
	if !strings.HasSuffix(got, "…") || len(got) > MaxRequestedName+len("…") || !utf8.ValidString(got) {
		t.Errorf("cut = %q (%d bytes)", got, len(got))
	}
	if got := shortName("a\xffb"); got != "a\ufffdb" {
		t.Errorf("invalid UTF-8 kept: %q", got)
	}
}

// The initialize instructions say, in a few sentences, what a model must hold to before it
// picks a tool: caveats and basis travel with every answer and are repeated, a write needs the
// person's confirmation, runs return at once and are polled with get_execution, and
// backend_unavailable means resmon is closed, never "no results". Short: read at every start.
func TestInstructionsCarryTheRulesAModelNeeds(t *testing.T) {
	text := Instructions(tools.Tools)
	for _, phrase := range []string{"Caveats", "basis", "repeat them", "name_only", "need the person's confirmation",
		"not_confirmed means nothing was sent", "run_sweep and run_routine return an execution_id at once", "poll get_execution",
		"backend_unavailable means resmon is not running", "never that nothing was found"} {
		if !strings.Contains(text, phrase) {
			t.Errorf("instructions lack %q", phrase)
		}
	}
	// Every write is named (from the table), and no read is.
	for _, tool := range tools.Tools {
		if strings.Contains(text, tool.Name) != tool.RequiresConfirmation && tool.Name != "get_execution" {
			t.Errorf("%s: named in the instructions = %v, a write = %v", tool.Name, strings.Contains(text, tool.Name), tool.RequiresConfirmation)
		}
	}
	if n := len(text); n > 800 {
		t.Errorf("instructions are %d characters; they are read at every session start, keep them under 800", n)
	}
	if n := strings.Count(text, ". "); n > 6 {
		t.Errorf("instructions have %d sentences; keep them to a few", n+1)
	}
}
