// Package proxy is the resmon tool surface: the backend HTTP client, the error model and the 25 tools of contract v2.3.
package proxy

import (
	"context"
	"net/url"
	"sync"
)

// ContractVersion is reported as serverInfo.version.
const ContractVersion = "2.3"

// Error codes of the contract's error model (plus the two v2.3 identity codes).
const (
	CodeBackendUnavailable  = "backend_unavailable"
	CodeNotFound            = "not_found"
	CodeInvalidArgument     = "invalid_argument"
	CodeConflict            = "conflict"
	CodeUpstreamError       = "upstream_error"
	CodeInternalError       = "internal_error"
	CodeIdentityUnavailable = "identity_unavailable"
	CodeInstanceMismatch    = "instance_mismatch"
)

// ToolError is the contract's structured failure: {"error","message","detail"}.
type ToolError struct {
	Code    string         `json:"error"`
	Message string         `json:"message"`
	Detail  map[string]any `json:"detail"`

	// BackendGone is set (never serialised) when the failure means the generation that was
	// called is no longer usable: a transport error or a 401. The upstream layer re-checks
	// discovery and may retry a read once on a new generation; a write is never replayed.
	BackendGone bool `json:"-"`
	// Sent is set when the request may have reached the backend (bytes were written), which
	// is what makes replaying a write unsafe.
	Sent bool `json:"-"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Request is one backend HTTP call a tool makes.
type Request struct {
	Method string
	Path   string     // e.g. /api/routines/4 (no query string)
	Query  url.Values // nil for none
	Body   any        // JSON-encoded when non-nil
	// ExpectedRuntimeID, when set, is what the caller expects the answering backend's
	// identity to be; it changes how a 409 is mapped (instance_mismatch vs conflict).
	ExpectedRuntimeID string
	// Write marks a request that changes backend state. Writes are never replayed.
	Write bool
}

// API performs backend calls for the tools. It returns the decoded success body (a JSON
// value; a string for a non-JSON body such as BibTeX; nil for an empty body) or a *ToolError.
// Implementations: *Client (one verified backend generation), *Upstream (follows the watcher
// across generations), and recording doubles in tests.
type API interface {
	Call(ctx context.Context, r *Request) (any, error)
}

// CallInfo is filled in by the upstream layer for the call whose context carries it, so the
// daemon can record which backend instance served a tool call.
type CallInfo struct {
	Generation uint64
	RuntimeID  string
	BaseURL    string
	Requests   int  // backend requests made
	Retried    bool // a read was retried once on a new generation
}

type callInfoKey struct{}

// callInfoCell is what the context carries: the caller's CallInfo and the lock that guards it
// while the call's backend requests (possibly from several goroutines) fill it in. One lock
// per call, so calls never wait on each other to record what they did.
type callInfoCell struct {
	mu   sync.Mutex
	info *CallInfo
}

// WithCallInfo returns a context carrying info for the upstream layer to fill.
func WithCallInfo(ctx context.Context, info *CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, &callInfoCell{info: info})
}

// updateCallInfo applies f to ctx's CallInfo, if it carries one, under that call's lock.
func updateCallInfo(ctx context.Context, f func(*CallInfo)) {
	if c, _ := ctx.Value(callInfoKey{}).(*callInfoCell); c != nil {
		c.mu.Lock()
		f(c.info)
		c.mu.Unlock()
	}
}

// snapshotCallInfo copies ctx's CallInfo under its lock (the zero value when there is none).
func snapshotCallInfo(ctx context.Context) CallInfo {
	var out CallInfo
	updateCallInfo(ctx, func(ci *CallInfo) { out = *ci })
	return out
}

// NewError builds a ToolError; a nil detail becomes {} on the wire.
func NewError(code, message string, detail map[string]any) *ToolError {
	if detail == nil {
		detail = map[string]any{}
	}
	return &ToolError{Code: code, Message: message, Detail: detail}
}

// InvalidArgument is the common tool-level validation failure.
func InvalidArgument(message string) *ToolError {
	return NewError(CodeInvalidArgument, message, nil)
}

// Handler runs one tool. args is the call's arguments object ({} when absent). It returns
// the success payload (any JSON-encodable value) or an error: a *ToolError is returned to the
// caller as is; any other error becomes internal_error.
type Handler func(ctx context.Context, api API, args map[string]any) (any, error)

// Tool is one row of the tool table, the single source for tools/list, READ_TOOLS and WRITE_TOOLS.
type Tool struct {
	Name        string
	Description string
	// Summary is the one line `resmongw tools` prints (no caveats: those live in Description).
	// While it is empty, the first sentence of Description stands in.
	Summary     string
	InputSchema map[string]any // {"type":"object", ...}
	// RequiresConfirmation is resmon's own field, emitted on every tool in tools/list: true
	// for the 7 writes, false for the 18 reads.
	RequiresConfirmation bool
	// Destructive and Idempotent feed the MCP annotations of write tools (reads are readOnlyHint).
	Destructive bool
	Idempotent  bool
	OpenWorld   bool // reaches sources outside the machine (run_sweep, run_routine)
	// Paging, on a list tool, says how its answer is cut to the client's budget and how the
	// rest is fetched (budget.go); nil for a tool answering one record.
	Paging *Paging
	// Whole marks an answer that cannot be cut (an export file): over the client's budget
	// it is refused with how to ask for less.
	Whole   bool
	Handler Handler
}

// Run is the one way a tool is called: the arguments are checked against the row's own input
// schema (type, enum, bounds; see checkArguments) and only then given to the handler, so no
// request reaches the backend with an argument of the wrong type. The MCP server's handler
// calls it.
func (t *Tool) Run(ctx context.Context, api API, args map[string]any) (any, error) {
	if terr := checkArguments(t.Name, t.InputSchema, args); terr != nil {
		return nil, terr
	}
	return t.Handler(ctx, api, args)
}
