// Package mcpserver serves the tool table over MCP on go-sdk: sessions, tool calls, the write
// confirmation policy, answers sized to the client and the wire wrapper.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/tools"
)

// ContractVersion is reported as serverInfo.version.
const ContractVersion = "2.3"

// ServerName is reported as serverInfo.name.
const ServerName = "resmon"

// Instructions is the initialize answer's instructions for a table: what a model must know
// before it chooses a tool, read at every session start, so it is kept to a few sentences.
// The writes are named from the table itself: harnesses commonly drop requires_confirmation
// before the model sees tools/list, so the flag alone would not tell it which tools they are.
// The person is asked when a write is called (by the gateway, confirm.go, or the harness), so
// the model is not told to ask first: that would be a second confirmation of the same call.
func Instructions(tools []tools.Tool) string {
	var writes []string
	for _, t := range tools {
		if t.RequiresConfirmation {
			writes = append(writes, t.Name)
		}
	}
	return "These tools answer from the person's own resmon app. " +
		"Caveats, warnings and each match's basis are part of every answer: repeat them whenever you report a result, " +
		"and never present a name_only or name+affiliation match as the person's own paper. " +
		"The tools that change things (" + strings.Join(writes, ", ") + ") need the person's confirmation, which they are asked for when you call one: " +
		"a conflict whose detail.reason is not_confirmed means nothing was sent, so say so and call again only if they ask. " +
		"run_sweep and run_routine return an execution_id at once; poll get_execution for progress. " +
		"backend_unavailable means resmon is not running (closed), never that nothing was found: say so, and suggest starting the app."
}

// ServerOptions configures NewServer.
type ServerOptions struct {
	Tools  []tools.Tool // default: Tools (the package table)
	Logger *slog.Logger // for the SDK; nil discards
	// OnCall, when set, is called once per tools/call after it finished (unknown tools too).
	OnCall func(ctx context.Context, rec CallRecord)
}

// CallRecord describes one finished tools/call.
type CallRecord struct {
	// Tool is the tool's name, or UnknownTool for a name the table does not have: the name
	// is chosen by the client, so keying stats on it would let a client grow them without
	// bound.
	Tool string
	// Requested is set only for an unknown tool: the name the client sent, cut to
	// MaxRequestedName bytes (valid UTF-8), for a log line.
	Requested string
	Write     bool
	Duration  time.Duration
	Code      string // the error code; "" on success
	Info      backend.CallInfo
	// Client and ClientVersion are the client's clientInfo: from this request's _meta on
	// protocol 2026-07-28, else from the session's initialize (empty when neither said).
	Client, ClientVersion string
	// Confirmation is what happened to a write on its way to resmon (one of the Confirm*
	// constants: asked, yes, remembered, declined, …); "" for reads. Never an argument value.
	Confirmation string
	// OutcomeUnknown: a write was sent and no answer came back, so whether resmon acted on
	// it is unknown (ToolError.Sent).
	OutcomeUnknown bool
}

const methodCallTool = "tools/call"

// UnknownTool is CallRecord.Tool for every call naming a tool the table does not have.
const UnknownTool = "(unknown tool)"

// MaxRequestedName bounds CallRecord.Requested.
const MaxRequestedName = 64

// shortName cuts a client-chosen name to MaxRequestedName bytes without splitting a rune,
// and replaces invalid UTF-8, so it can go in a log line.
func shortName(s string) string {
	if len(s) > MaxRequestedName {
		cut := MaxRequestedName
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(s, "\ufffd")
}

// NewServer returns the resmon MCP server: every tool of the table registered with raw
// arguments (validated by the tools themselves, exactly like the reference: unknown arguments
// ignored, no SDK schema validation), results shaped as the reference's
// {"content":[{"type":"text","text":<JSON>}],"isError":bool}. Serve it over a transport
// wrapped with WrapTransport so tools/list carries requires_confirmation.
func NewServer(api backend.API, opts *ServerOptions) *mcp.Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.Tools == nil {
		o.Tools = tools.Tools
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: ContractVersion}, &mcp.ServerOptions{
		Logger: o.Logger,
		// The reference advertises exactly {"tools": {}}: the list never changes, so no
		// listChanged, and there is no logging, no resources and no prompts (unservedMethods).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Instructions: Instructions(o.Tools),
	})
	d := &dispatcher{api: api, byName: make(map[string]*tools.Tool, len(o.Tools)), onCall: o.OnCall}
	for i := range o.Tools {
		t := &o.Tools[i]
		d.byName[t.Name] = t
		schema := any(t.InputSchema)
		if t.InputSchema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		s.AddTool(&mcp.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: schema,
			Annotations: annotations(t),
		}, d.handler(t))
	}
	s.AddReceivingMiddleware(d.middleware)
	return s
}

// annotations maps a table row to MCP hints: reads are read-only; writes carry the row's
// destructive/idempotent/open-world judgement. OpenWorld is explicit on reads too, because
// MCP's default for a missing openWorldHint is true and the reads only touch the local app.
func annotations(t *tools.Tool) *mcp.ToolAnnotations {
	ow := t.OpenWorld
	if !t.RequiresConfirmation {
		return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &ow}
	}
	destructive := t.Destructive
	return &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: t.Idempotent, OpenWorldHint: &ow}
}

type dispatcher struct {
	api    backend.API
	byName map[string]*tools.Tool
	onCall func(context.Context, CallRecord)
}

type callStateKey struct{}

// callState carries what the handler learned back out to the middleware that records it.
type callState struct {
	code    string
	unknown bool      // the request was sent and its answer lost (ToolError.Sent)
	ask     *askRound // a write under a session's policy; nil otherwise
}

// unservedMethods belong to capabilities this server does not advertise (initialize says
// {"tools": {}} and nothing else). The SDK would answer resources/list and prompts/list with
// empty lists carrying its own cache fields; a method a server does not offer is -32601 in
// MCP, which is also how the reference answers every method it lacks.
var unservedMethods = map[string]bool{
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true,
	"logging/setLevel": true, "completion/complete": true,
}

// middleware refuses the unserved methods, answers unknown tools the reference's way (an
// isError result, not a protocol error) and reports every call to OnCall.
func (d *dispatcher) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if unservedMethods[method] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method}
		}
		if method == methodListTools {
			return withoutOffWrites(ctx, d, next, method, req)
		}
		if method != methodCallTool {
			return next(ctx, method, req)
		}
		ctr, ok := req.(*mcp.CallToolRequest)
		if !ok || ctr.Params == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		name := ctr.Params.Name
		t, known := d.byName[name]
		st := &callState{}
		var res mcp.Result
		var err error
		if known {
			if w := writeSessionFrom(ctx); w != nil && t.RequiresConfirmation {
				st.ask = &askRound{w: w}
				if !usesMultiRoundTrip(ctr.Session) {
					// The SDK asks within this call (elicitation/create) and calls the handler
					// again with the answer: the call's context is what bounds the asking.
					var cancel context.CancelCauseFunc
					ctx, cancel = context.WithCancelCause(ctx)
					defer cancel(nil)
					st.ask.cancel = cancel
				}
			}
			ctx = context.WithValue(backend.WithCallInfo(ctx, &backend.CallInfo{}), callStateKey{}, st)
			res, err = next(ctx, method, req)
			if err != nil && st.ask != nil && st.ask.outcome == ConfirmAsked {
				// Only the SDK's asking fails this way (the handler answers every error as a
				// result): nothing was sent, and the model is told so in words.
				res, err = failedAsk(ctx, name, st.ask), nil
				st.code = backend.CodeConflict
			}
			if err != nil && st.code == "" {
				st.code = "protocol_error"
			}
		} else {
			e := backend.InvalidArgument("Unknown tool '" + name + "'.")
			st.code = e.Code
			res = toolResult(e, true)
		}
		d.record(ctx, name, t, st, start, ctr.ClientInfo())
		return res, err
	}
}

const methodListTools = "tools/list"

// usesMultiRoundTrip reports whether the SDK answers this session's input requests as an
// input_required result (2026-07-28 and later) rather than asking the client itself within
// the call; the SDK's own test (mcp/mrtr.go, clientSupportsMultiRoundTrip).
func usesMultiRoundTrip(ss *mcp.ServerSession) bool {
	if ss == nil {
		return true
	}
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// withoutOffWrites is tools/list for a session whose writes are off: the writes are not
// listed, so a model is not offered what it cannot do.
func withoutOffWrites(ctx context.Context, d *dispatcher, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	w := writeSessionFrom(ctx)
	list, ok := res.(*mcp.ListToolsResult)
	if err != nil || w == nil || w.policy != WritesOff || !ok || list == nil {
		return res, err
	}
	out := *list
	out.Tools = nil
	for _, tl := range list.Tools {
		if t, known := d.byName[tl.Name]; known && t.RequiresConfirmation {
			continue
		}
		out.Tools = append(out.Tools, tl)
	}
	return &out, nil
}

// record reports one finished call to OnCall; t is nil for a name the table does not have.
func (d *dispatcher) record(ctx context.Context, name string, t *tools.Tool, st *callState, start time.Time, client *mcp.Implementation) {
	if d.onCall == nil {
		return
	}
	rec := CallRecord{Tool: name, Duration: time.Since(start), Code: st.code}
	if st.ask != nil {
		rec.Confirmation = st.ask.outcome
	}
	if client != nil {
		rec.Client, rec.ClientVersion = client.Name, client.Version
	}
	if t != nil {
		rec.Write = t.RequiresConfirmation
		rec.OutcomeUnknown = st.unknown && rec.Write
	} else {
		rec.Tool, rec.Requested = UnknownTool, shortName(name)
	}
	rec.Info = backend.SnapshotCallInfo(ctx)
	d.onCall(ctx, rec)
}

func (d *dispatcher) handler(t *tools.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		st, _ := ctx.Value(callStateKey{}).(*callState)
		fail := func(terr *backend.ToolError) (*mcp.CallToolResult, error) {
			if st != nil {
				st.code, st.unknown = terr.Code, terr.Sent
			}
			return toolResult(terr, true), nil
		}
		if st != nil && st.ask != nil && req.Params != nil {
			var args map[string]any
			if st.ask.w.policy == WritesAsk {
				// Arguments the write would refuse are refused before the person is asked.
				var terr *backend.ToolError
				args, terr = decodeArgs(raw)
				if terr == nil {
					terr = tools.CheckArguments(t.Name, t.InputSchema, args)
				}
				if terr != nil {
					return fail(terr)
				}
			}
			if res := gateWrite(ctx, t, req, args, st.ask); res != nil {
				if res.IsError {
					st.code = backend.CodeConflict // detail.reason and the record's Confirmation say why
				}
				return res, nil
			}
		}
		payload, terr := runTool(ctx, d.api, t, raw)
		if terr == nil {
			payload, terr = d.sized(ctx, req, t, raw, payload)
		}
		if terr != nil {
			return fail(terr)
		}
		return toolResult(payload, false), nil
	}
}

// sized fits a successful answer to the calling client's budget (budget.go).
func (d *dispatcher) sized(ctx context.Context, req *mcp.CallToolRequest, t *tools.Tool, raw json.RawMessage, payload any) (any, *backend.ToolError) {
	if t.Paging == nil && !t.Whole {
		return payload, nil
	}
	args, terr := decodeArgs(raw)
	if terr != nil {
		return nil, terr
	}
	again := func(args map[string]any) (any, *backend.ToolError) {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, internalError(t.Name, "EncodeError")
		}
		return runTool(ctx, d.api, t, b)
	}
	return fitAnswer(t, args, payload, BudgetFor(ctx, ClientName(req)), again)
}

// runTool decodes the arguments and runs the handler, turning anything that is not a
// *ToolError (an error or a panic) into the reference's internal_error, never a stack trace.
func runTool(ctx context.Context, api backend.API, t *tools.Tool, raw json.RawMessage) (payload any, terr *backend.ToolError) {
	args, terr := decodeArgs(raw)
	if terr != nil {
		return nil, terr
	}
	defer func() {
		if p := recover(); p != nil {
			payload, terr = nil, internalError(t.Name, typeName(p))
		}
	}()
	if t.Handler == nil {
		return nil, internalError(t.Name, "NoHandler")
	}
	v, err := t.Run(ctx, api, args)
	if err != nil {
		var te *backend.ToolError
		if errors.As(err, &te) && te != nil {
			return nil, te
		}
		return nil, internalError(t.Name, typeName(err))
	}
	return v, nil
}

func internalError(name, reason string) *backend.ToolError {
	return backend.NewError(backend.CodeInternalError, "The resmon MCP server failed handling '"+name+"'.", map[string]any{"reason": reason})
}

// typeName names a value's type without the pointer star ("errors.errorString").
func typeName(v any) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", v), "*")
}

// decodeArgs turns the raw arguments into the map the handlers take: absent or null → {},
// numbers as json.Number (exact, like the backend bodies), anything but an object refused.
func decodeArgs(raw json.RawMessage) (map[string]any, *backend.ToolError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if raw[0] != '{' {
		return nil, backend.InvalidArgument("Tool arguments must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil || args == nil {
		return nil, backend.InvalidArgument("Tool arguments must be a JSON object.")
	}
	return args, nil
}

// toolResult renders a payload as the reference does: one text item holding the JSON of the
// payload, scrubbed of every token this process knows. No structuredContent.
func toolResult(payload any, isError bool) *mcp.CallToolResult {
	if te, ok := payload.(*backend.ToolError); ok {
		payload = errorPayload(te)
	}
	text, err := encodePayload(payload)
	if err != nil {
		// Only reachable for values JSON cannot express (NaN, channels): a bug in a tool.
		text, _ = encodePayload(errorPayload(internalError("result", "EncodeError")))
		isError = true
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: scrub.String(text)}},
		IsError: isError,
	}
}

type wireError struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Detail  map[string]any `json:"detail"`
}

func errorPayload(te *backend.ToolError) wireError {
	d := te.Detail
	if d == nil {
		d = map[string]any{}
	}
	return wireError{Error: te.Code, Message: te.Message, Detail: d}
}

func encodePayload(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the text is for a model, not a web page
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Session is what one harness session brings to the server.
type Session struct {
	// Writes is the session's write policy and what it remembers (Confirmations.Session);
	// nil runs writes as they come, for a server that can send none (the shim's fallback).
	Writes *WriteSession
	// MaxOutput is the harness's --max-output in bytes; 0 sizes answers by the client's name.
	MaxOutput int
}

// Connect serves one harness session on t with srv, which serves table: the session's write
// policy and answer budget go on the context every call of it runs under, and the wire wrapper
// goes around t. Every session starts here, a daemon's and the shim's fallback's alike.
func Connect(ctx context.Context, srv *mcp.Server, table []tools.Tool, t mcp.Transport, s Session) (*mcp.ServerSession, error) {
	if s.Writes != nil {
		ctx = WithWriteSession(ctx, s.Writes)
	}
	return srv.Connect(WithMaxOutput(ctx, s.MaxOutput), WrapTransport(t, table), nil)
}
