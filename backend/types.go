// Package backend is the verified HTTP client to resmon (token, identity, retries across
// generations) and the contract's error model, down to whether a failed request was sent.
package backend

import (
	"context"
	"net/url"
	"sync"
)

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

// SnapshotCallInfo copies ctx's CallInfo under its lock (the zero value when there is none).
func SnapshotCallInfo(ctx context.Context) CallInfo {
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
