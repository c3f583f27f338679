package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The wire wrapper's fast path answers a session's tools/call requests after its first one
// exactly as the SDK path does, records them the same way, and stops on cancellation and when
// the session ends.

// fastPeer is a raw session on the conformance tools, with OnCall recorded.
type fastPeer struct {
	*coreRawPeer
	mu      sync.Mutex
	records []CallRecord
	next    int
}

func newFastPeer(t *testing.T, tools []Tool) *fastPeer {
	fp := &fastPeer{next: 100}
	srv := NewServer(nil, &ServerOptions{Tools: tools, OnCall: func(_ context.Context, r CallRecord) {
		fp.mu.Lock()
		fp.records = append(fp.records, r)
		fp.mu.Unlock()
	}})
	fp.coreRawPeer = coreRawServe(t, srv, tools)
	fp.initialize("2025-06-18")
	return fp
}

// call sends one tools/call with the given params and returns the answer's result (the
// id checked and left out).
func (p *fastPeer) call(params string) string {
	p.t.Helper()
	p.next++
	id := strconv.Itoa(p.next)
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`)
	_, m := p.recv()
	if string(m["id"]) != id {
		p.t.Fatalf("answer to %s while waiting for %s", m["id"], id)
	}
	if m["error"] != nil {
		return "error:" + string(m["error"])
	}
	return string(m["result"])
}

func TestFastPathAnswersLikeTheSDK(t *testing.T) {
	cases := []string{
		`{"name":"echo","arguments":{"isError":true,"n":9007199254740993}}`,
		`{"name":"echo","arguments":null}`,
		`{"name":"echo"}`,
		`{"name":"fails","arguments":{}}`,
		`{"name":"echo","arguments":[1,2]}`,
		`{"name":"echo","arguments":{"n":"seven"}}`,
		`{"name":"echo","arguments":{"n":1},"_meta":{"progressToken":"p1"}}`,
	}
	for _, params := range cases {
		t.Run(params, func(t *testing.T) {
			p := newFastPeer(t, conformanceTools())
			before := fastServed.Load()
			viaSDK := p.call(params) // the session's first call goes through the SDK
			if fastServed.Load() != before {
				t.Fatal("the first call of a session took the fast path")
			}
			viaFast := p.call(params)
			if fastServed.Load() != before+1 {
				t.Fatal("the second call did not take the fast path")
			}
			if !sameJSON(t, json.RawMessage(viaSDK), json.RawMessage(viaFast)) {
				t.Fatalf("fast path answered\n %s\nthe SDK\n %s", viaFast, viaSDK)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.records) != 2 || p.records[0].Tool != p.records[1].Tool || p.records[0].Code != p.records[1].Code ||
				p.records[0].Write != p.records[1].Write {
				t.Fatalf("records differ: %+v", p.records)
			}
		})
	}
}

func TestFastPathLeavesOtherCallsToTheSDK(t *testing.T) {
	p := newFastPeer(t, conformanceTools())
	p.call(`{"name":"echo","arguments":{}}`)
	before := fastServed.Load()
	for _, params := range []string{
		`{"name":"nope","arguments":{}}`,         // unknown tool: the middleware's answer
		`{"name":"create_thing","arguments":{}}`, // a write: the SDK path asks the person (confirm.go)
		`{"name":7}`,                             // params the SDK refuses
		`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, // per-request protocol
	} {
		p.call(params)
	}
	if n := fastServed.Load() - before; n != 0 {
		t.Fatalf("%d of them took the fast path", n)
	}
}

// hangTools has a read that waits until its context ends and says so.
func hangTools(entered chan<- struct{}, ended chan<- error) []Tool {
	tools := conformanceTools()
	return append(tools, Tool{Name: "hang", Description: "Waits.", InputSchema: map[string]any{"type": "object"},
		Handler: func(ctx context.Context, _ API, _ map[string]any) (any, error) {
			entered <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		}})
}

func TestFastPathCallIsCancelledAndNotAnswered(t *testing.T) {
	entered, ended := make(chan struct{}, 1), make(chan error, 1)
	p := newFastPeer(t, hangTools(entered, ended))
	p.call(`{"name":"echo","arguments":{}}`)
	before := fastServed.Load()
	p.send(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	<-entered
	if fastServed.Load() != before+1 {
		t.Fatal("the call did not take the fast path")
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h"}}`)
	if err := <-ended; err == nil {
		t.Fatal("the tool's context was not cancelled")
	}
	// No answer to "h": the next line is the ping's.
	p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if _, m := p.recv(); string(m["id"]) != `"after"` {
		t.Fatalf("got %s, want the ping's answer (a cancelled request gets none)", m["id"])
	}
}

func TestFastPathCallsEndWithTheSession(t *testing.T) {
	entered, ended := make(chan struct{}, 1), make(chan error, 1)
	p := newFastPeer(t, hangTools(entered, ended))
	p.call(`{"name":"echo","arguments":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	<-entered
	_ = p.conn.Close() // the harness went away
	if err := <-ended; err == nil {
		t.Fatal("the tool's context was not cancelled")
	}
}

// Closing the session on our side (the daemon stopping) answers the fast-path calls in flight
// before the connection closes, as the SDK does for its own.
func TestFastPathCallsInFlightAreAnsweredBeforeClose(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	tools := append(conformanceTools(), Tool{Name: "gate", Description: "Waits for the test.", InputSchema: map[string]any{"type": "object"},
		Handler: func(ctx context.Context, _ API, _ map[string]any) (any, error) {
			entered <- struct{}{}
			<-release
			return map[string]any{"done": true}, nil
		}})
	client, server := net.Pipe()
	defer client.Close()
	ss, err := NewServer(nil, &ServerOptions{Tools: tools}).Connect(coreCtx(t), WrapTransport(&mcp.IOTransport{Reader: server, Writer: server}, tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &fastPeer{coreRawPeer: &coreRawPeer{t: t, conn: client, r: bufio.NewReaderSize(client, 1<<20)}, next: 100}
	p.initialize("2025-06-18")
	p.call(`{"name":"echo","arguments":{}}`)
	before := fastServed.Load()
	p.send(`{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"gate","arguments":{}}}`)
	<-entered
	if fastServed.Load() != before+1 {
		t.Fatal("the call did not take the fast path")
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Close() }()
	close(release)
	line, m := p.recv()
	if string(m["id"]) != `"g"` || !strings.Contains(line, `\"done\":true`) {
		t.Fatalf("got %s, want the gate call's answer", line)
	}
	<-closed // its error, if any, is the pipe's; the answer came first
}

// encodeToolResult writes the same bytes as json.Marshal plus withIsErrorFalse, for every
// kind of text a payload can hold.
func TestEncodeToolResultMatchesMarshal(t *testing.T) {
	texts := []string{"", `{"a":1}`, `<b>&amp;</b>`, "line\nbreak\ttab", "quote \" back \\ slash",
		"\u2028\u2029", "é ünïcode 日本", "bad \xff utf8", "\x00\x1f control", `{"isError":true}`}
	for _, text := range texts {
		for _, isError := range []bool{false, true} {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
			want, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if with, ok := withIsErrorFalse(want); ok {
				want = with
			}
			got, err := encodeToolResult(res)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("text %q isError %v:\n got %s\nwant %s", text, isError, got, want)
			}
		}
	}
	// Another shape takes the general route, and still says isError.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"k": 1}}
	got, err := encodeToolResult(res)
	if err != nil || !strings.Contains(string(got), `"structuredContent":{"k":1}`) || !strings.HasSuffix(string(got), `"isError":false}`) {
		t.Fatalf("general route: %s, %v", got, err)
	}
}
