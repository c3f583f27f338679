package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/tools"
)

// A person confirms each write before it reaches resmon, and the daemon is the one that asks:
// it is the one place every harness passes through, and resmon's own requires_confirmation
// is read by no harness. The write tools answer their first round with the SDK's input
// request (an elicitation form), and the SDK delivers it: as an input_required result to a
// 2026-07-28 client, which sends a new tools/call with the answer and our requestState, or as
// an elicitation/create to an older client, after which the SDK calls the handler again with
// the answer (go-sdk mcp/mrtr.go). Either way the same handler reads the answer and the same
// state, so there is one path. The state is our promise, and on 2026-07-28 the client hands
// it back in a request of its own making: it is signed with a key only this process holds,
// bound to the session, the tool and the arguments, spent once, and it expires with the
// confirm timeout. Anything other than an accepted form with confirm ticked sends nothing.

// WritePolicy is how one session's writes are confirmed (`resmongw stdio --writes`).
type WritePolicy string

const (
	// WritesAsk: the gateway asks the person before each write (the default).
	WritesAsk WritePolicy = "ask"
	// WritesHarness: writes go as they come; the harness's own approval is what the person
	// relies on.
	WritesHarness WritePolicy = "harness"
	// WritesOff: the writes are not listed and every call of one is refused.
	WritesOff WritePolicy = "off"
)

// ParseWritePolicy reads a --writes value; "" is the default, ask.
func ParseWritePolicy(s string) (WritePolicy, error) {
	switch WritePolicy(s) {
	case "", WritesAsk:
		return WritesAsk, nil
	case WritesHarness, WritesOff:
		return WritePolicy(s), nil
	}
	return "", fmt.Errorf("--writes=%q: want ask, harness or off", s)
}

// DefaultConfirmTimeout is how long a form waits for the person. Long enough to read it,
// switch back from another window and think; short enough that a form forgotten on screen
// cannot send a write long after the conversation moved on (a yes after it sends nothing).
// Harnesses give up on a tool call sooner or later themselves (Codex after tool_timeout_sec,
// 60 s by default); this bound is the daemon's own, for clients that never do.
const DefaultConfirmTimeout = 5 * time.Minute

// Confirmation outcomes, CallRecord.Confirmation: what happened to a write on its way to
// resmon ("" for reads).
const (
	ConfirmAsked         = "asked"          // the form went out (2026-07-28: the first round); nothing sent yet
	ConfirmAskedYes      = "asked_yes"      // the person ticked confirm and accepted: sent
	ConfirmRemembered    = "remembered"     // sent without asking: "don't ask again" for this tool in this session
	ConfirmDeclined      = "declined"       // declined, or accepted without confirm ticked: nothing sent
	ConfirmCancelled     = "cancelled"      // dismissed (or the client gave up the call): nothing sent
	ConfirmTimedOut      = "timed_out"      // no answer within the confirm timeout: nothing sent
	ConfirmBadAnswer     = "bad_answer"     // an answer we cannot read, or the client failed to ask: nothing sent
	ConfirmBadState      = "bad_state"      // a retry whose state is forged, spent, or for other arguments: nothing sent
	ConfirmSessionClosed = "session_closed" // the session ended while the form was open: nothing sent
	ConfirmCannotAsk     = "cannot_ask"     // the client declared no elicitation: refused
	ConfirmPolicyOff     = "policy_off"     // --writes=off: refused
	ConfirmHarness       = "harness"        // --writes=harness: sent, the harness asked (or not)
)

// A write the gateway did not send answers the contract's conflict code (the contract's six
// codes are the whole vocabulary a caller may switch on: a seventh would be a break), with
// detail.reason saying why: ReasonNotConfirmed when the person did not confirm it (or could
// not be asked), ReasonWritesOff when --writes=off refused it. detail.sent is always false.
const (
	ReasonNotConfirmed = "not_confirmed"
	ReasonWritesOff    = "writes_disabled"
)

// The form's fields. confirm is required and has no default, so a harness shows it unticked
// and a person has to tick it (Claude Code refuses Accept until then).
const (
	confirmInputID = "confirm"
	fieldConfirm   = "confirm"
	fieldRemember  = "remember"
)

// maxOpenPromises bounds the states issued and not yet spent or expired: a client that asks
// and never answers cannot grow the set; the oldest is dropped (its retry then sends nothing).
const maxOpenPromises = 1024

// Confirmations is the daemon's side of asking: the signing key (random, in memory only, so a
// restarted daemon honours no state from before), the confirm timeout, and the states
// issued and not yet spent. One per process; every session's WriteSession points to it.
type Confirmations struct {
	key     []byte
	timeout time.Duration
	now     func() time.Time // tests move it to expire a state
	// afterFunc starts the confirm timeout of a form asked within a call (time.AfterFunc;
	// tests fire it themselves once the form is on the client's side).
	afterFunc func(time.Duration, func()) interface{ Stop() bool }

	mu   sync.Mutex
	open map[string]time.Time // nonce → expiry
}

// NewConfirmations makes the process's confirmation state; timeout ≤ 0 is the default.
func NewConfirmations(timeout time.Duration) *Confirmations {
	if timeout <= 0 {
		timeout = DefaultConfirmTimeout
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (it crashes the program instead)
	return &Confirmations{key: key, timeout: timeout, now: time.Now, open: map[string]time.Time{},
		afterFunc: func(d time.Duration, f func()) interface{ Stop() bool } { return time.AfterFunc(d, f) }}
}

// Timeout is how long a form waits for an answer.
func (c *Confirmations) Timeout() time.Duration { return c.timeout }

// WriteSession is one session's write policy (one harness connection) and what the person
// said "don't ask again" to in it.
type WriteSession struct {
	c      *Confirmations
	policy WritePolicy
	id     string // random: binds a state to this session
	// closing ends when the session stops: a form still open within a call is then answered
	// as nothing sent.
	closing context.Context
	Close   context.CancelFunc

	mu         sync.Mutex
	remembered map[string]bool
}

// Session starts a session's write policy. Its Close ends the session's asking: a form still
// open is answered as nothing sent (the session is stopping and will not read the answer).
func (c *Confirmations) Session(p WritePolicy) *WriteSession {
	closing, cancel := context.WithCancel(context.Background())
	return &WriteSession{c: c, policy: p, id: randomHex(16), closing: closing, Close: cancel, remembered: map[string]bool{}}
}

// Policy is the session's policy.
func (w *WriteSession) Policy() WritePolicy { return w.policy }

type writeSessionKey struct{}

// WithWriteSession gives the calls served under ctx the session's write policy (the daemon
// sets it on each session's context). A server whose calls carry none runs writes as they come.
func WithWriteSession(ctx context.Context, w *WriteSession) context.Context {
	return context.WithValue(ctx, writeSessionKey{}, w)
}

func writeSessionFrom(ctx context.Context) *WriteSession {
	w, _ := ctx.Value(writeSessionKey{}).(*WriteSession)
	return w
}

func (w *WriteSession) remember(tool string) {
	w.mu.Lock()
	w.remembered[tool] = true
	w.mu.Unlock()
}

func (w *WriteSession) isRemembered(tool string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.remembered[tool]
}

// promise is what a requestState says: this session asked about this tool with these
// arguments, and the answer is good until Expires.
type promise struct {
	Session string `json:"s"`
	Tool    string `json:"t"`
	Args    string `json:"a"` // hex SHA-256 of the arguments in canonical JSON
	Expires int64  `json:"e"` // unix milliseconds
	Nonce   string `json:"n"`
}

// issue signs a new promise and keeps it open until spent or expired.
func (w *WriteSession) issue(tool, digest string) string {
	c := w.c
	now := c.now()
	p := promise{Session: w.id, Tool: tool, Args: digest, Expires: now.Add(c.timeout).UnixMilli(), Nonce: randomHex(16)}
	body, _ := json.Marshal(p)
	c.mu.Lock()
	for n, exp := range c.open {
		if !now.Before(exp) {
			delete(c.open, n)
		}
	}
	for len(c.open) >= maxOpenPromises {
		oldest, at := "", time.Time{}
		for n, exp := range c.open {
			if oldest == "" || exp.Before(at) {
				oldest, at = n, exp
			}
		}
		delete(c.open, oldest)
	}
	c.open[p.Nonce] = time.UnixMilli(p.Expires)
	c.mu.Unlock()
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(c.sign(body))
}

func (c *Confirmations) sign(body []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(body)
	return m.Sum(nil)
}

// errExpired is a genuine state past its time; errBadState everything else wrong with one.
var (
	errExpired  = errors.New("expired")
	errBadState = errors.New("bad state")
)

// redeem checks a state handed back with a retry and spends it: ours (signature), this
// session's, this tool's and these arguments', not spent, not expired. A state is spent by
// the first retry that names it, whatever that retry's answer, so it can never be replayed.
func (w *WriteSession) redeem(state, tool, digest string) error {
	c := w.c
	b64, sig, ok := strings.Cut(state, ".")
	if !ok {
		return errBadState
	}
	enc := base64.RawURLEncoding
	body, err1 := enc.DecodeString(b64)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, c.sign(body)) {
		return errBadState
	}
	var p promise
	if json.Unmarshal(body, &p) != nil {
		return errBadState
	}
	c.mu.Lock()
	_, open := c.open[p.Nonce]
	delete(c.open, p.Nonce) // spent by any retry naming it, even one that does not match
	c.mu.Unlock()
	switch {
	case p.Session != w.id || p.Tool != tool || p.Args != digest || !open:
		return errBadState
	case !c.now().Before(time.UnixMilli(p.Expires)):
		return errExpired
	}
	return nil
}

// argsDigest is the digest a state binds: the arguments as decoded (objects' keys sorted by
// encoding/json, numbers as written), so a client re-encoding the same arguments matches and
// any other value does not.
func argsDigest(args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// askRound is a write call's confirmation as the middleware and the handler share it: the
// outcome for the record and, for a client asked within the call (before 2026-07-28), what
// ends the SDK's elicitation early: the confirm timeout or the session closing. Whichever
// comes first of those and the answer wins; the others then change nothing.
type askRound struct {
	w       *WriteSession
	outcome string
	// cancel is the call's context's (nil on 2026-07-28, where a form is answered by a new
	// request and the state's expiry is the timeout).
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	timer    interface{ Stop() bool }
	onClose  func() bool
	answered bool
	ended    error // errConfirmTimeout or errSessionClosing, once one fired
}

var (
	errConfirmTimeout = errors.New("no answer within the confirm timeout")
	errSessionClosing = errors.New("the session is closing")
)

// arm starts the confirm timeout and the watch on the session's end, for a form the SDK is
// about to send within this call.
func (r *askRound) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil || r.timer != nil {
		return
	}
	r.timer = r.w.c.afterFunc(r.w.c.timeout, func() { r.end(errConfirmTimeout) })
	r.onClose = context.AfterFunc(r.w.closing, func() { r.end(errSessionClosing) })
}

func (r *askRound) end(cause error) {
	r.mu.Lock()
	if r.answered || r.ended != nil {
		r.mu.Unlock()
		return
	}
	r.ended = cause
	r.mu.Unlock()
	r.cancel(cause)
}

// answer stops both as the answer arrives, and says whether one of them came first (the
// answer is then late and changes nothing).
func (r *askRound) answer() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = true
	r.release()
	return r.ended
}

// release stops the timer and the watch; called under r.mu, and by the middleware when the call ends.
func (r *askRound) release() {
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.onClose != nil {
		r.onClose()
	}
}

// confirmRefusal is the isError answer of a write that was not sent, in words a model can pass on.
func confirmRefusal(tool, why string) *backend.ToolError {
	return backend.NewError(backend.CodeConflict, why, map[string]any{"tool": tool, "sent": false, "reason": ReasonNotConfirmed})
}

// gateWrite decides a write call under its session's policy before anything is sent. It
// returns nil to run the write, or the result to answer instead (a refusal, or the form).
// args are the decoded, checked arguments.
func gateWrite(ctx context.Context, t *tools.Tool, req *mcp.CallToolRequest, args map[string]any, r *askRound) *mcp.CallToolResult {
	w := r.w
	switch w.policy {
	case WritesHarness:
		r.outcome = ConfirmHarness
		return nil
	case WritesOff:
		r.outcome = ConfirmPolicyOff
		return toolResult(writesOffError(t.Name), true)
	}
	p := req.Params
	if p.RequestState != "" || p.InputResponses != nil {
		return answerRound(ctx, t, p, args, r)
	}
	if w.isRemembered(t.Name) {
		r.outcome = ConfirmRemembered
		return nil
	}
	if !canAsk(req) {
		r.outcome = ConfirmCannotAsk
		return toolResult(confirmRefusal(t.Name, fmt.Sprintf(
			"%s was not run: this gateway asks the person to confirm each write, and this client cannot show its question "+
				"(it declared no elicitation support). Nothing was sent. To let writes through here, set --writes=harness "+
				"in this client's resmon entry, but only if the client asks the person itself before each tool call.", t.Name)), true)
	}
	r.outcome = ConfirmAsked
	r.arm() // when the SDK asks within this call: bound it
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmInputID: confirmForm(t, args)},
		RequestState:  w.issue(t.Name, argsDigest(args)),
	}
}

// answerRound reads the person's answer on a retry (either protocol) and returns nil only for
// an accepted form with confirm ticked whose state is good.
func answerRound(ctx context.Context, t *tools.Tool, p *mcp.CallToolParamsRaw, args map[string]any, r *askRound) *mcp.CallToolResult {
	refuse := func(outcome, why string) *mcp.CallToolResult {
		r.outcome = outcome
		return toolResult(confirmRefusal(t.Name, why), true)
	}
	if r.cancel != nil {
		switch ended := r.answer(); {
		case errors.Is(ended, errConfirmTimeout):
			return refuse(ConfirmTimedOut, lateWords(t.Name, r.w.c.timeout))
		case ended != nil:
			return refuse(ConfirmSessionClosed, fmt.Sprintf(closedWords, t.Name))
		}
	}
	if err := r.w.redeem(p.RequestState, t.Name, argsDigest(args)); err != nil {
		if errors.Is(err, errExpired) {
			return refuse(ConfirmTimedOut, lateWords(t.Name, r.w.c.timeout))
		}
		return refuse(ConfirmBadState, fmt.Sprintf("%s was not run: this confirmation does not match a question this session asked "+
			"about these exact arguments, or it was already used. Nothing was sent. Call %s again to ask the person.", t.Name, t.Name))
	}
	if ctx.Err() != nil {
		return refuse(ConfirmCancelled, t.Name+" was not run: the call was cancelled. Nothing was sent.")
	}
	ans, ok := p.InputResponses[confirmInputID].(*mcp.ElicitResult)
	if !ok || ans == nil {
		return refuse(ConfirmBadAnswer, t.Name+" was not run: the answer to the confirmation could not be read. Nothing was sent.")
	}
	switch ans.Action {
	case "accept":
	case "decline":
		return refuse(ConfirmDeclined, "The confirmation of "+t.Name+" was declined (by the person, or by a client that answers for them, "+
			"as codex exec does); nothing was sent. Ask the person what they would like instead.")
	case "cancel":
		return refuse(ConfirmCancelled, "The confirmation of "+t.Name+" was dismissed (by the person, or by a client that cannot show it, "+
			"as claude -p does); nothing was sent.")
	default:
		return refuse(ConfirmBadAnswer, t.Name+" was not run: the answer to the confirmation could not be read. Nothing was sent.")
	}
	confirm, ok := ans.Content[fieldConfirm].(bool)
	if _, present := ans.Content[fieldConfirm]; present && !ok {
		return refuse(ConfirmBadAnswer, t.Name+" was not run: the answer to the confirmation could not be read. Nothing was sent.")
	}
	if !confirm {
		return refuse(ConfirmDeclined, "The person did not tick confirm for "+t.Name+"; nothing was sent.")
	}
	if rem, present := ans.Content[fieldRemember]; present {
		if b, ok := rem.(bool); !ok {
			return refuse(ConfirmBadAnswer, t.Name+" was not run: the answer to the confirmation could not be read. Nothing was sent.")
		} else if b {
			r.w.remember(t.Name)
		}
	}
	r.outcome = ConfirmAskedYes
	return nil
}

const closedWords = "%s was not run: the gateway stopped or restarted while the confirmation was open. Nothing was sent; call it again to ask the person again."

func lateWords(tool string, timeout time.Duration) string {
	return fmt.Sprintf("%s was not run: the person did not answer the confirmation within %s. Nothing was sent; "+
		"call %s again if they still want it.", tool, timeout, tool)
}

func writesOffError(tool string) *backend.ToolError {
	return backend.NewError(backend.CodeConflict, tool+" was not run: writes are turned off for this client (--writes=off in its resmon entry). "+
		"Nothing was sent. The person can make this change in the resmon app.", map[string]any{"tool": tool, "sent": false, "reason": ReasonWritesOff})
}

// canAsk reports whether the client can show a form: it declared elicitation (per request on
// 2026-07-28, at initialize before), with form mode or no mode named (which means form).
func canAsk(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// failedAsk is the answer of a write whose elicitation within the call failed (an older
// client): our timeout, the session closing, the client giving up the call, or the client's
// error (a malformed answer included: the SDK checks it against the form). Nothing was sent.
func failedAsk(ctx context.Context, tool string, r *askRound) *mcp.CallToolResult {
	r.mu.Lock()
	r.release()
	r.mu.Unlock()
	var why string
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errConfirmTimeout):
		r.outcome, why = ConfirmTimedOut, lateWords(tool, r.w.c.timeout)
	case errors.Is(cause, errSessionClosing):
		r.outcome, why = ConfirmSessionClosed, fmt.Sprintf(closedWords, tool)
	case ctx.Err() != nil:
		r.outcome, why = ConfirmCancelled, tool+" was not run: the call was cancelled while the confirmation was open. Nothing was sent."
	default:
		r.outcome, why = ConfirmBadAnswer, tool+" was not run: the client could not ask the person, or answered in a way that cannot be read. Nothing was sent."
	}
	return toolResult(confirmRefusal(tool, why), true)
}

// confirmForm is the form: the tool and what it will do with these arguments in plain words,
// a required confirm and an optional remember.
func confirmForm(t *tools.Tool, args map[string]any) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: scrub.String(confirmMessage(t, args)),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				fieldConfirm: map[string]any{"type": "boolean", "title": "Yes, run " + t.Name,
					"description": "Tick to let resmon do this. Leave it unticked, or decline, and nothing is sent."},
				fieldRemember: map[string]any{"type": "boolean", "title": "Don't ask again this session",
					"description": "Later " + t.Name + " calls in this session (this harness connection) run without asking.", "default": false},
			},
			"required": []string{fieldConfirm},
		},
	}
}

// confirmMessage says what the write will do, in its row's words (toolfacts.Row.Confirm);
// every value shown is cut short, since the arguments are the model's to choose.
func confirmMessage(t *tools.Tool, a map[string]any) string {
	what := "Run " + t.Name
	if t.Confirm != nil {
		what = t.Confirm(a)
	}
	return "resmon: " + t.Name + "\n" + what + ".\nDo you want this to happen?"
}
