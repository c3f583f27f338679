package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/resmongw/resmongw/discovery"
)

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
		line, err := appendMessage(nil, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
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

// Token presence says whether the file holds a usable token, never its value.
func TestTokenPresenceJudgesTheContent(t *testing.T) {
	dir := t.TempDir()
	token := "Tk_" + strings.Repeat("a1B2", 12)
	write := func(port int, content string) {
		if err := os.WriteFile(discovery.TokenFile(dir, port), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1001, token+"\n")
	write(1002, "")
	write(1003, "  \n")
	write(1004, "not a token!")
	write(1005, "short")
	if err := os.Mkdir(discovery.TokenFile(dir, 1006), 0o700); err != nil { // cannot be read as a file
		t.Fatal(err)
	}
	want := map[int]string{1001: TokenPresent, 1002: TokenEmpty, 1003: TokenEmpty, 1004: TokenMalformed,
		1005: TokenMalformed, 1006: TokenUnreadable, 1007: TokenAbsent}
	st := discovery.State{Resolved: discovery.Resolved{StateDir: dir}}
	for port := 1001; port <= 1007; port++ {
		st.Candidates = append(st.Candidates, discovery.Candidate{Port: port})
	}
	got := tokenPresence(st)
	if len(got) != len(want) {
		t.Fatalf("%d entries: %+v", len(got), got)
	}
	for _, ts := range got {
		if ts.Presence != want[ts.Port] || ts.File != filepath.Join(dir, filepath.Base(ts.File)) {
			t.Errorf("port %d: %q (%s), want %q", ts.Port, ts.Presence, ts.File, want[ts.Port])
		}
	}
	// With a verified backend only its own port is checked.
	st.Backend = &discovery.Backend{Port: 1004}
	if got := tokenPresence(st); len(got) != 1 || got[0].Presence != TokenMalformed {
		t.Fatalf("verified: %+v", got)
	}
	b, _ := json.Marshal(got)
	var human bytes.Buffer
	renderStatus(&human, &Status{Targets: []TargetStatus{{Key: "k", State: st, Tokens: tokenPresence(discovery.State{
		Resolved: st.Resolved, Candidates: []discovery.Candidate{{Port: 1001}}})}}}, time.Now())
	if strings.Contains(string(b)+human.String(), token) || !strings.Contains(human.String(), TokenPresent+" (") {
		t.Fatalf("status output:\n%s\n%s", b, human.String())
	}
}

// The exit code follows the caller's target and the targets sessions use; idle ones are shown
// but not counted.
func TestTargetsOKIgnoresIdleTargets(t *testing.T) {
	caller := func(v bool) TargetStatus { return TargetStatus{Caller: true, Verified: v} }
	used := func(v bool) TargetStatus { return TargetStatus{Sessions: 2, Verified: v} }
	idle := func(v bool) TargetStatus { return TargetStatus{Idle: true, Verified: v} }
	for _, c := range []struct {
		ts   []TargetStatus
		want bool
	}{
		{[]TargetStatus{caller(true)}, true},
		{[]TargetStatus{caller(false)}, false},
		{[]TargetStatus{caller(true), idle(false), idle(false)}, true},
		{[]TargetStatus{caller(true), used(false)}, false},
		{[]TargetStatus{caller(true), used(true), idle(false)}, true},
		{[]TargetStatus{caller(false), idle(true)}, false},
		{[]TargetStatus{used(true), idle(true)}, false}, // no caller target: shutting down
		{nil, false},
	} {
		if got := targetsOK(c.ts); got != c.want {
			t.Errorf("%+v: %v, want %v", c.ts, got, c.want)
		}
	}
	var out bytes.Buffer
	renderStatus(&out, &Status{Targets: []TargetStatus{{Key: "a", Caller: true}, {Key: "b", Idle: true}}}, time.Now())
	if !strings.Contains(out.String(), "target 2 (idle") || strings.Contains(out.String(), "target 1 (idle") {
		t.Fatalf("human status:\n%s", out.String())
	}
}

// Stray positional arguments are a usage error, not ignored.
func TestStatusRefusesExtraArguments(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--json", "extra"}, {"--socket", "/nonexistent/s.sock", "x", "y"}} {
		if code := StatusMain(args); code != statusUsage {
			t.Errorf("status %v: exit %d, want %d", args, code, statusUsage)
		}
	}
}
