package mcpserver

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// Every branch of a write's confirmation, through go-sdk's own client on both protocol
// families, each checked on the simulator: did resmon get the write or not.

// The two families: an older client is asked within the call (elicitation/create); a
// 2026-07-28 client gets input_required and sends a new tools/call with the answer.
var confirmFamilies = []struct{ name, version string }{
	{"elicitation-create", "2025-06-18"},
	{"input-required", "2026-07-28"},
}

// confirmWrite is the write the tests send: activate routine 2 (the simulator has it, inactive).
const confirmWrite = "activate_routine"

var confirmArgs = map[string]any{"routine_id": 2}

const confirmPath = "/api/routines/2/activate"

type confirmWorld struct {
	t    *testing.T
	sim  *resmonsim.Sim
	srv  *mcp.Server
	conf *Confirmations
	recs *coreRecords
}

func newConfirmWorld(t *testing.T, timeout time.Duration) *confirmWorld {
	t.Helper()
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{})
	recs := &coreRecords{}
	srv := NewServer(api, &ServerOptions{OnCall: recs.add})
	return &confirmWorld{t: t, sim: sim, srv: srv, conf: NewConfirmations(timeout), recs: recs}
}

// sent counts the writes resmon received.
func (w *confirmWorld) sent() int {
	n := 0
	for _, r := range w.sim.Requests() {
		if r.Method == "POST" && r.Path == confirmPath {
			n++
		}
	}
	return n
}

// confirmations lists the recorded outcomes of the write calls, in order.
func (w *confirmWorld) confirmations() []string {
	w.recs.mu.Lock()
	defer w.recs.mu.Unlock()
	var out []string
	for _, r := range w.recs.recs {
		if r.Write {
			out = append(out, r.Confirmation)
		}
	}
	return out
}

type sessionOpts struct {
	policy  WritePolicy
	version string
	// elicit answers the form; nil: the client declares no elicitation.
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// manual: the client returns input_required results as they are (no automatic retry).
	manual bool
}

// session opens one daemon-like session (its own WriteSession) and a go-sdk client on it.
func (w *confirmWorld) session(o sessionOpts) (*mcp.ClientSession, *WriteSession) {
	t := w.t
	t.Helper()
	ctx := backendtest.Context(t)
	ws := w.conf.Session(o.policy)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := w.srv.Connect(WithWriteSession(ctx, ws), WrapTransport(st, tools.Tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	copts := &mcp.ClientOptions{ElicitationHandler: o.elicit}
	if o.manual {
		copts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "confirm-test", Version: "0"}, copts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != o.version {
		t.Fatalf("negotiated %s, want %s", got, o.version)
	}
	return cs, ws
}

// answer is an elicitation handler that gives action and content. Each answer is a copy: the
// SDK's client fills a form's defaults into the content it is handed, and the same case runs
// on both protocol families at once (sharing one map was a data race between them).
func answer(action string, content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: action, Content: maps.Clone(content)}, nil
	}
}

// callWrite calls the write and returns the result's text and isError (err only for a
// protocol error, which a write must never answer with).
func callWrite(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: confirmWrite, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	return resultText(t, res), res.IsError
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content items: %+v", len(res.Content), res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	return tc.Text
}

// wantRefused checks an isError answer naming the tool, saying nothing was sent, with code.
func wantRefused(t *testing.T, text string, isError bool, reason string, words ...string) {
	t.Helper()
	if !isError {
		t.Fatalf("answered without isError: %s", text)
	}
	var e wireError
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatalf("not an error object: %s", text)
	}
	if e.Error != backend.CodeConflict || e.Detail["reason"] != reason || !strings.Contains(e.Message, confirmWrite) || e.Detail["sent"] != false {
		t.Fatalf("refusal %s, want code %s, reason %s, naming %s with sent=false", text, backend.CodeConflict, reason, confirmWrite)
	}
	for _, w := range words {
		if !strings.Contains(e.Message, w) {
			t.Fatalf("refusal %q does not say %q", e.Message, w)
		}
	}
}

func wantOutcomes(t *testing.T, w *confirmWorld, want ...string) {
	t.Helper()
	got := w.confirmations()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("recorded confirmations %v, want %v", got, want)
	}
}

// asked is what a 2026-07-28 client's two requests record before the final outcome: the
// first round, which only asks.
func asked(version string, outcome string) []string {
	if version >= "2026-07-28" {
		return []string{ConfirmAsked, outcome}
	}
	return []string{outcome}
}

func TestConfirmAnswers(t *testing.T) {
	cases := []struct {
		name    string
		elicit  func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		sent    int
		outcome string
		words   string
	}{
		{"yes", answer("accept", map[string]any{"confirm": true}), 1, ConfirmAskedYes, ""},
		{"decline", answer("decline", nil), 0, ConfirmDeclined, "was declined"},
		{"cancel", answer("cancel", nil), 0, ConfirmCancelled, "was dismissed"},
		{"confirm-false", answer("accept", map[string]any{"confirm": false}), 0, ConfirmDeclined, "did not tick"},
		{"client-error", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the form could not be shown")
		}, 0, "", ""},
	}
	for _, fam := range confirmFamilies {
		for _, c := range cases {
			t.Run(fam.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				w := newConfirmWorld(t, 0)
				var forms []*mcp.ElicitParams
				var mu sync.Mutex
				cs, _ := w.session(sessionOpts{policy: WritesAsk, version: fam.version,
					elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						forms = append(forms, req.Params)
						mu.Unlock()
						return c.elicit(ctx, req)
					}})
				res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: confirmWrite, Arguments: confirmArgs})
				if c.outcome == "" {
					// A client that fails to ask: the old family gets our refusal; a
					// 2026-07-28 client's own retry loop gives up, so no retry ever comes.
					if fam.version < "2026-07-28" {
						if err != nil {
							t.Fatalf("tools/call: %v", err)
						}
						wantRefused(t, resultText(t, res), res.IsError, ReasonNotConfirmed, "Nothing was sent")
						wantOutcomes(t, w, ConfirmBadAnswer)
					} else if err == nil {
						t.Fatalf("the client's failure to ask came back as a result: %+v", res)
					}
				} else {
					if err != nil {
						t.Fatalf("tools/call: %v", err)
					}
					text := resultText(t, res)
					if c.sent == 1 {
						if res.IsError {
							t.Fatalf("confirmed write failed: %s", text)
						}
					} else {
						wantRefused(t, text, res.IsError, ReasonNotConfirmed, c.words, "nothing was sent")
					}
					wantOutcomes(t, w, asked(fam.version, c.outcome)...)
				}
				if n := w.sent(); n != c.sent {
					t.Fatalf("resmon got %d writes, want %d", n, c.sent)
				}
				if len(forms) != 1 {
					t.Fatalf("asked %d times, want once", len(forms))
				}
				checkForm(t, forms[0])
			})
		}
	}
}

// checkForm: the message names the tool and says what happens; confirm is a required
// boolean with no default (so it shows unticked); remember an optional boolean.
func checkForm(t *testing.T, p *mcp.ElicitParams) {
	t.Helper()
	if !strings.Contains(p.Message, confirmWrite) || !strings.Contains(p.Message, "Put routine 2 on its schedule") {
		t.Fatalf("form message %q does not name the tool and what it does", p.Message)
	}
	b, _ := json.Marshal(p.RequestedSchema)
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	c, r := s.Properties["confirm"], s.Properties["remember"]
	if c["type"] != "boolean" || r["type"] != "boolean" || strings.Join(s.Required, ",") != "confirm" {
		t.Fatalf("schema %s", b)
	}
	if _, has := c["default"]; has {
		t.Fatalf("confirm has a default: %s", b)
	}
}

// Answers a person cannot give through a form but a client can send: each sends nothing.
func TestConfirmMalformedAnswers(t *testing.T) {
	for _, content := range []map[string]any{
		{},                                    // accept, confirm missing
		{"confirm": "yes"},                    // not a boolean
		{"confirm": true, "remember": "sure"}, // remember not a boolean
	} {
		b, _ := json.Marshal(content)
		t.Run("2025/"+string(b), func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			// The go-sdk client checks the answer against the form itself, so this answer
			// comes from a client that does not (the raw peer below).
			p := newConfirmRawPeer(t, w, WritesAsk)
			p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}`)
			p.recv()
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"activate_routine","arguments":{"routine_id":2}}}`)
			line, req := p.recv()
			if string(req["method"]) != `"elicitation/create"` {
				t.Fatalf("expected elicitation/create, got %s", line)
			}
			resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"action": "accept", "content": content}})
			p.send(string(resp))
			line, m := p.recv()
			var res struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			}
			if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 {
				t.Fatalf("not a tool result: %s", line)
			}
			text, isError := res.Content[0].Text, res.IsError
			wantRefused(t, text, isError, ReasonNotConfirmed, "Nothing was sent")
			if n := w.sent(); n != 0 {
				t.Fatalf("resmon got %d writes", n)
			}
		})
		t.Run("2026/"+string(b), func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			cs, _ := w.session(sessionOpts{policy: WritesAsk, version: "2026-07-28", manual: true, elicit: answer("cancel", nil)})
			state := firstRound(t, cs, confirmArgs)
			text, isError := retry(t, cs, confirmArgs, state, &mcp.ElicitResult{Action: "accept", Content: content})
			wantRefused(t, text, isError, ReasonNotConfirmed, "othing was sent")
			if n := w.sent(); n != 0 {
				t.Fatalf("resmon got %d writes", n)
			}
		})
	}
}

// firstRound calls the write on a manual 2026-07-28 client and returns the state of the
// form it got back.
func firstRound(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: confirmWrite, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.InputRequests["confirm"] == nil || res.RequestState == "" || len(res.Content) != 0 {
		t.Fatalf("first round is not a form: %+v", res)
	}
	return res.RequestState
}

// retry is the client's second request: the same tool, args, the answer and a state.
func retry(t *testing.T, cs *mcp.ClientSession, args map[string]any, state string, ans *mcp.ElicitResult) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: confirmWrite, Arguments: args,
		InputResponses: mcp.InputResponseMap{"confirm": ans}, RequestState: state})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if res.NeedsInput() {
		t.Fatalf("the retry was asked again: %+v", res)
	}
	return resultText(t, res), res.IsError
}

// yes is a fresh accepting answer (fresh for the same reason as answer's).
func yes() *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
}

// On 2026-07-28 the client composes the retry: a replayed, altered, forged, foreign or
// expired state sends nothing.
func TestConfirmStateIsTheDaemonsPromise(t *testing.T) {
	t.Parallel()
	w := newConfirmWorld(t, time.Hour)
	opts := sessionOpts{policy: WritesAsk, version: "2026-07-28", manual: true, elicit: answer("cancel", nil)}
	cs, _ := w.session(opts)

	t.Run("replay", func(t *testing.T) {
		state := firstRound(t, cs, confirmArgs)
		if text, isError := retry(t, cs, confirmArgs, state, yes()); isError {
			t.Fatalf("first retry refused: %s", text)
		}
		text, isError := retry(t, cs, confirmArgs, state, yes())
		wantRefused(t, text, isError, ReasonNotConfirmed, "already used")
		if n := w.sent(); n != 1 {
			t.Fatalf("resmon got %d writes, want 1", n)
		}
	})
	t.Run("other-arguments", func(t *testing.T) {
		before := w.sent()
		state := firstRound(t, cs, map[string]any{"routine_id": 3})
		text, isError := retry(t, cs, confirmArgs, state, yes())
		wantRefused(t, text, isError, ReasonNotConfirmed, "these exact arguments")
		// The state was spent by that try: the right arguments now do not redeem it either.
		text, isError = retry(t, cs, map[string]any{"routine_id": 3}, state, yes())
		wantRefused(t, text, isError, ReasonNotConfirmed)
		if n := w.sent() - before; n != 0 {
			t.Fatalf("resmon got %d writes", n)
		}
	})
	t.Run("forged", func(t *testing.T) {
		before := w.sent()
		state := firstRound(t, cs, confirmArgs)
		body, sig, _ := strings.Cut(state, ".")
		for _, forged := range []string{
			"", "x", "x.y", body + "." + sig[:len(sig)-2] + "AA", // a signature not ours
			strings.Replace(state, body, body[:len(body)-2]+"AA", 1), // a body not signed
			signedBy(t, NewConfirmations(time.Hour), state),          // another daemon's key (a restart)
		} {
			text, isError := retry(t, cs, confirmArgs, forged, yes())
			if forged == "" {
				// No state at all with an answer: still a retry, still refused.
				wantRefused(t, text, isError, ReasonNotConfirmed)
				continue
			}
			wantRefused(t, text, isError, ReasonNotConfirmed, "does not match")
		}
		if n := w.sent() - before; n != 0 {
			t.Fatalf("resmon got %d writes", n)
		}
	})
	t.Run("other-session", func(t *testing.T) {
		before := w.sent()
		state := firstRound(t, cs, confirmArgs)
		other, _ := w.session(opts)
		text, isError := retry(t, other, confirmArgs, state, yes())
		wantRefused(t, text, isError, ReasonNotConfirmed, "does not match")
		if n := w.sent() - before; n != 0 {
			t.Fatalf("resmon got %d writes", n)
		}
	})
	t.Run("expired-late-yes", func(t *testing.T) {
		before := w.sent()
		state := firstRound(t, cs, confirmArgs)
		w.conf.mu.Lock()
		w.conf.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		w.conf.mu.Unlock()
		defer func() { w.conf.mu.Lock(); w.conf.now = time.Now; w.conf.mu.Unlock() }()
		text, isError := retry(t, cs, confirmArgs, state, yes())
		wantRefused(t, text, isError, ReasonNotConfirmed, "did not answer the confirmation within")
		if n := w.sent() - before; n != 0 {
			t.Fatalf("resmon got %d writes", n)
		}
	})
}

var b64 = base64.RawURLEncoding

// newConfirmRawPeer is a raw line peer on a session under policy (a client that does not
// check its own answers, as the go-sdk client does).
func newConfirmRawPeer(t *testing.T, w *confirmWorld, policy WritePolicy) *coreRawPeer {
	t.Helper()
	client, server := net.Pipe()
	ctx := WithWriteSession(backendtest.Context(t), w.conf.Session(policy))
	ss, err := w.srv.Connect(ctx, WrapTransport(&mcp.IOTransport{Reader: server, Writer: server}, tools.Tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		_ = ss.Wait()
	})
	return &coreRawPeer{t: t, conn: client, r: bufio.NewReaderSize(client, 1<<20)}
}

// signedBy re-signs state's body with another Confirmations' key.
func signedBy(t *testing.T, c *Confirmations, state string) string {
	t.Helper()
	body, _, _ := strings.Cut(state, ".")
	raw, err := b64.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	return body + "." + b64.EncodeToString(c.sign(raw))
}

// Older clients: no answer within the confirm timeout sends nothing, and the yes that comes
// after it changes nothing. The timeout is fired by the test once the form is on the client's
// side (a real 50 ms timer could fire before the client even saw the form).
func TestConfirmTimeoutAndLateYes(t *testing.T) {
	t.Parallel()
	ctx := backendtest.Context(t)
	w := newConfirmWorld(t, 50*time.Millisecond)
	fire := make(chan func(), 1)
	w.conf.afterFunc = func(_ time.Duration, f func()) interface{ Stop() bool } {
		fire <- f
		return stopNothing{}
	}
	asked, release, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	cs, _ := w.session(sessionOpts{policy: WritesAsk, version: "2025-06-18",
		elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			defer close(answered)
			close(asked)
			<-release // the person answers only after the gateway gave up
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}})
	go func() {
		select {
		case <-asked:
			(<-fire)() // the confirm timeout, now
		case <-ctx.Done():
		}
	}()
	text, isError := callWrite(t, cs, confirmArgs)
	wantRefused(t, text, isError, ReasonNotConfirmed, "did not answer the confirmation within 50ms", "Nothing was sent")
	close(release)
	select {
	case <-answered:
	case <-ctx.Done():
		t.Fatal("the form was never answered")
	}
	// A read after the late answer: the server has read that answer by the time it serves
	// this, since a session's messages are read in order.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_routines", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if n := w.sent(); n != 0 {
		t.Fatalf("resmon got %d writes after a late yes", n)
	}
	wantOutcomes(t, w, ConfirmTimedOut)
}

type stopNothing struct{}

func (stopNothing) Stop() bool { return true }

// A session that stops while its form is open sends nothing.
func TestConfirmSessionClosingSendsNothing(t *testing.T) {
	t.Parallel()
	w := newConfirmWorld(t, time.Hour)
	asking := make(chan struct{})
	var ws *WriteSession
	cs, ws := w.session(sessionOpts{policy: WritesAsk, version: "2025-06-18",
		elicit: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asking)
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	go func() { <-asking; ws.Close() }()
	text, isError := callWrite(t, cs, confirmArgs)
	wantRefused(t, text, isError, ReasonNotConfirmed, "while the confirmation was open")
	if n := w.sent(); n != 0 {
		t.Fatalf("resmon got %d writes", n)
	}
	wantOutcomes(t, w, ConfirmSessionClosed)
}

// remember covers that tool in that session only: a new session is asked again.
func TestConfirmRememberIsPerSession(t *testing.T) {
	for _, fam := range confirmFamilies {
		t.Run(fam.name, func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			var mu sync.Mutex
			forms := 0
			elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				forms++
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "remember": true}}, nil
			}
			cs, _ := w.session(sessionOpts{policy: WritesAsk, version: fam.version, elicit: elicit})
			for range 3 {
				if text, isError := callWrite(t, cs, confirmArgs); isError {
					t.Fatal(text)
				}
			}
			if forms != 1 || w.sent() != 3 {
				t.Fatalf("asked %d times for 3 writes (%d sent), want once", forms, w.sent())
			}
			// Another write tool in the same session is still asked about.
			res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "deactivate_routine", Arguments: confirmArgs})
			if err != nil || res.IsError || forms != 2 {
				t.Fatalf("deactivate_routine: %v %+v, forms %d", err, res, forms)
			}
			cs2, _ := w.session(sessionOpts{policy: WritesAsk, version: fam.version, elicit: answer("decline", nil)})
			text, isError := callWrite(t, cs2, confirmArgs)
			wantRefused(t, text, isError, ReasonNotConfirmed, "declined")
			if n := w.sent(); n != 3 {
				t.Fatalf("resmon got %d writes, want 3", n)
			}
			want := append(asked(fam.version, ConfirmAskedYes), ConfirmRemembered, ConfirmRemembered)
			want = append(want, asked(fam.version, ConfirmAskedYes)...)
			want = append(want, asked(fam.version, ConfirmDeclined)...)
			wantOutcomes(t, w, want...)
		})
	}
}

func TestConfirmPolicies(t *testing.T) {
	for _, fam := range confirmFamilies {
		t.Run(fam.name+"/off", func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			cs, _ := w.session(sessionOpts{policy: WritesOff, version: fam.version, elicit: answer("accept", map[string]any{"confirm": true})})
			list, err := cs.ListTools(backendtest.Context(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != len(toolfacts.ReadTools()) {
				t.Fatalf("listed %d tools, want the %d reads", len(list.Tools), len(toolfacts.ReadTools()))
			}
			for _, tl := range list.Tools {
				if row, _ := tools.ToolByName(tl.Name); row.RequiresConfirmation {
					t.Fatalf("%s listed under --writes=off", tl.Name)
				}
			}
			text, isError := callWrite(t, cs, confirmArgs)
			wantRefused(t, text, isError, ReasonWritesOff, "writes are turned off")
			if n := w.sent(); n != 0 {
				t.Fatalf("resmon got %d writes", n)
			}
			wantOutcomes(t, w, ConfirmPolicyOff)
		})
		t.Run(fam.name+"/harness", func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			cs, _ := w.session(sessionOpts{policy: WritesHarness, version: fam.version, elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				t.Error("asked under --writes=harness")
				return nil, errors.New("no")
			}})
			if text, isError := callWrite(t, cs, confirmArgs); isError {
				t.Fatal(text)
			}
			if n := w.sent(); n != 1 {
				t.Fatalf("resmon got %d writes, want 1", n)
			}
			wantOutcomes(t, w, ConfirmHarness)
		})
		t.Run(fam.name+"/no-capability", func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			cs, _ := w.session(sessionOpts{policy: WritesAsk, version: fam.version})
			text, isError := callWrite(t, cs, confirmArgs)
			wantRefused(t, text, isError, ReasonNotConfirmed, "--writes=harness", "Nothing was sent")
			res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "get_routine", Arguments: confirmArgs})
			if err != nil || res.IsError {
				t.Fatalf("a read failed: %v %+v", err, res)
			}
			if n := w.sent(); n != 0 {
				t.Fatalf("resmon got %d writes", n)
			}
			wantOutcomes(t, w, ConfirmCannotAsk)
		})
		t.Run(fam.name+"/bad-arguments-not-asked", func(t *testing.T) {
			t.Parallel()
			w := newConfirmWorld(t, 0)
			cs, _ := w.session(sessionOpts{policy: WritesAsk, version: fam.version, elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				t.Error("asked about arguments the write refuses")
				return nil, errors.New("no")
			}})
			text, isError := callWrite(t, cs, map[string]any{"routine_id": "four"})
			if !isError || !strings.Contains(text, backend.CodeInvalidArgument) {
				t.Fatalf("%s", text)
			}
		})
	}
}

func TestParseWritePolicy(t *testing.T) {
	for in, want := range map[string]WritePolicy{"": WritesAsk, "ask": WritesAsk, "harness": WritesHarness, "off": WritesOff} {
		if got, err := ParseWritePolicy(in); err != nil || got != want {
			t.Errorf("%q → %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"Ask", "no", "on", " ask"} {
		if _, err := ParseWritePolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The form says in plain words what each write will do with its arguments.
func TestConfirmMessages(t *testing.T) {
	for tool, c := range map[string]struct {
		args map[string]any
		want []string
	}{
		"run_sweep":            {map[string]any{"query": "crispr", "sources": []any{"arxiv", "pubmed"}, "max_results": json.Number("10")}, []string{"Search arxiv and pubmed now for “crispr”", "at most 10", "quota"}},
		"create_routine":       {map[string]any{"name": "weekly", "keywords": []any{"a"}, "sources": []any{"arxiv"}, "schedule": "0 9 * * 1"}, []string{"routine named “weekly”", "inactive"}},
		"create_watch_profile": {map[string]any{"name": "Ada"}, []string{"watch profile for “Ada”", "name matches only"}},
		"run_routine":          {map[string]any{"routine_id": json.Number("3")}, []string{"Run routine 3 now", "quota"}},
		"activate_routine":     {map[string]any{"routine_id": json.Number("3")}, []string{"routine 3 on its schedule", "by itself"}},
		"deactivate_routine":   {map[string]any{"routine_id": json.Number("3")}, []string{"routine 3 off its schedule", "kept"}},
		"update_settings":      {map[string]any{"group": "ai", "settings": map[string]any{"b": "2", "a": "1"}}, []string{"“ai” group: a → “1”, b → “2”"}},
	} {
		row, _ := tools.ToolByName(tool)
		msg := confirmMessage(&row, c.args)
		if !strings.Contains(msg, tool) {
			t.Errorf("%s: %q does not name the tool", tool, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", tool, msg, w)
			}
		}
	}
	// Every write of the table has words of its own (its row's Confirm), never the bare
	// "Run <tool>" a tool without them would get.
	for i := range tools.Tools {
		if tl := &tools.Tools[i]; tl.RequiresConfirmation {
			if msg := confirmMessage(tl, tl.Example); strings.Contains(msg, "\nRun "+tl.Name+".\n") {
				t.Errorf("%s: no words of its own: %q", tl.Name, msg)
			}
		}
	}
	profile, _ := tools.ToolByName("create_watch_profile")
	long := confirmMessage(&profile, map[string]any{"name": strings.Repeat("x", 5000)})
	if len(long) > 1000 {
		t.Fatalf("a long argument was not cut short (%d bytes)", len(long))
	}
}

// Each write's destructiveHint is chosen for what it does (README, "Confirming writes"): the
// ones that spend quota or overwrite settings are destructive, the ones that add a row or can
// be undone are not. Reads are readOnlyHint.
func TestWriteAnnotationsSayWhatEachWriteDoes(t *testing.T) {
	want := map[string]bool{
		"run_sweep": true, "run_routine": true, "activate_routine": true, "update_settings": true,
		"create_routine": false, "create_watch_profile": false, "deactivate_routine": false,
	}
	for i := range tools.Tools {
		tl := &tools.Tools[i]
		a := annotations(tl)
		if !tl.RequiresConfirmation {
			if !a.ReadOnlyHint {
				t.Errorf("%s: a read without readOnlyHint", tl.Name)
			}
			continue
		}
		// The hint is the row's decision; the decisions written out above are checked too,
		// and a write added later is held to its own row.
		d, ok := want[tl.Name]
		if ok && tl.Destructive != d {
			t.Errorf("%s: Destructive %v, want %v", tl.Name, tl.Destructive, d)
		}
		if a.DestructiveHint == nil || *a.DestructiveHint != tl.Destructive || a.ReadOnlyHint {
			t.Errorf("%s: %+v, want destructiveHint %v", tl.Name, a, tl.Destructive)
		}
	}
}
