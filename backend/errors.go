package backend

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resmongw/resmongw/scrub"
)

// The contract's fixed sentences (reference §3). A backend reply contributes to a message only
// through a non-empty string `detail`; everything else uses these fallbacks, verbatim.
const (
	MsgTransport        = "resmon stopped responding part-way through the request."
	MsgTokenRefused     = "resmon refused this server's local API token; it has probably restarted. Try again."
	MsgNotFound         = "That item does not exist."
	MsgRejected         = "The request was rejected."
	MsgInstanceMismatch = "This request reached a different running app."
	MsgConflict         = "resmon could not accept that right now."
	MsgExecutionLimit   = "resmon is already at its execution limit."
	MsgUpstream         = "resmon reported an internal error."
	MsgUnexpected       = "Unexpected response from resmon."
	MsgIdentityMissing  = "The responding app did not supply a supported runtime identity."

	// Gateway-specific sentences (no reference counterpart).
	MsgNotJSON          = "resmon sent a reply that says it is JSON but is not valid JSON; it was not relayed."
	MsgCancelled        = "The request was cancelled before resmon answered."
	MsgWriteInterrupted = "resmon restarted while this change was being sent, so whether it took effect is unknown. " +
		"It was not sent again. Check the current state with a read tool before trying again."
	// MsgNotSent is a failure before the request was written: the connection was refused or
	// broke first, so the backend cannot have acted on it (a write changed nothing).
	MsgNotSent = "resmon could not be reached, so the request was not sent and nothing was done. " +
		"It has probably stopped or is restarting; try again once it is running."
)

// MsgTooLarge is the sentence for a reply over the size bound; the bound is named so a person
// knows why and what to change.
func MsgTooLarge(limit int64) string {
	return "resmon sent a reply larger than " + sizeText(limit) +
		", which this gateway does not relay. Ask for less (a smaller limit, a page, or a narrower filter)."
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Conflict headers the backend sets on "routine already running" 409s (backend-http-api §2).
const (
	headerConflict    = "X-Resmon-Conflict"
	headerExecutionID = "X-Resmon-Execution-Id"
)

// MapStatus turns a non-2xx backend reply into the contract's error (reference §3).
// body is the raw reply, expectedRuntimeID the request's expectation ("" for none) and base
// the generation's base URL (for the 401's detail.tried). header may be nil.
//
// The message is only ever the backend's non-empty string `detail` or the fixed fallback, so
// nothing else the backend says (objects, validation lists, plain text) reaches the caller.
func MapStatus(status int, header http.Header, body []byte, expectedRuntimeID, base string) *ToolError {
	detail := errorDetail(body)
	msg := func(fallback string) string {
		if s, ok := detail.(string); ok && s != "" {
			// Scrubbed here too, so even the error value never holds a token a backend echoed.
			return scrub.String(s)
		}
		return fallback
	}
	switch {
	case status == http.StatusUnauthorized:
		// The guard refused our token: the instance we verified is gone (the token rotates on
		// every start). The guard runs before any handler, so nothing was done (Sent stays false).
		e := NewError(CodeBackendUnavailable, MsgTokenRefused, map[string]any{"tried": []string{base}})
		e.BackendGone = true
		return e
	case status == http.StatusNotFound:
		return NewError(CodeNotFound, msg(MsgNotFound), nil)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return NewError(CodeInvalidArgument, msg(MsgRejected), nil)
	case status == http.StatusConflict:
		if expectedRuntimeID != "" {
			if obj, ok := detail.(map[string]any); ok && obj["code"] == "instance_mismatch" {
				actual := obj["actual_runtime_id"]
				if s, ok := actual.(string); ok {
					actual = scrub.String(s)
				}
				return NewError(CodeInstanceMismatch, MsgInstanceMismatch, map[string]any{
					"expected_runtime_id": expectedRuntimeID,
					"actual_runtime_id":   actual,
				})
			}
		}
		return NewError(CodeConflict, msg(MsgConflict), conflictDetail(header))
	case status == http.StatusTooManyRequests:
		return NewError(CodeConflict, msg(MsgExecutionLimit), nil)
	case status >= 500:
		return NewError(CodeUpstreamError, msg(MsgUpstream), nil)
	default:
		// 403 host/origin refusals, 405, and anything else unexpected.
		return NewError(CodeInternalError, msg(MsgUnexpected), nil)
	}
}

// errorDetail returns the `detail` value of a FastAPI error body, or nil when the body is not
// a JSON object carrying one.
func errorDetail(body []byte) any {
	var env struct {
		Detail any `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return nil
	}
	return env.Detail
}

// conflictDetail surfaces the backend's machine-readable conflict headers, so a tool can say
// which execution is already running without parsing the sentence:
// {"conflict": "routine_already_running", "execution_id": N or null}. nil when absent.
func conflictDetail(h http.Header) map[string]any {
	kind := strings.TrimSpace(h.Get(headerConflict))
	if kind == "" {
		return nil
	}
	d := map[string]any{"conflict": kind, "execution_id": nil}
	if id, err := strconv.ParseInt(strings.TrimSpace(h.Get(headerExecutionID)), 10, 64); err == nil {
		d["execution_id"] = id
	}
	return d
}

// sendState is how far a request got before it failed: a connection was had, and the whole
// request was written to it (httptrace's GotConn and WroteRequest).
type sendState struct{ connected, written bool }

// failure classifies a transport error where it happens, by how far the request got. Until
// the whole request is written the backend cannot have acted on it, so the failure says "not
// sent"; once it is written, the outcome is unknown. (After a crash, the first call's refused
// connection is "not sent": it is not "stopped responding part-way".) The reason names follow
// httpx's exception classes, which is what the reference reports in detail.reason.
func (c *Client) failure(parent, rctx context.Context, err error, s sendState) *ToolError {
	if parent.Err() != nil {
		return cancelledError(c.base)
	}
	timedOut := errors.Is(context.Cause(rctx), errRequestTimeout)
	var op *net.OpError
	dial := errors.As(err, &op) && op.Op == "dial"
	switch {
	case s.written && timedOut:
		return transportError(c.base, reasonReadTimeout, true)
	case s.written && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return transportError(c.base, "RemoteProtocolError", true)
	case s.written:
		return transportError(c.base, "ReadError", true)
	case dial && (timedOut || op.Timeout()), !dial && !s.connected && timedOut:
		return transportError(c.base, "ConnectTimeout", false)
	case dial, !s.connected:
		return transportError(c.base, "ConnectError", false)
	case timedOut:
		return transportError(c.base, "WriteTimeout", false)
	default:
		return transportError(c.base, "WriteError", false)
	}
}

// transportError is the reference's mapping of an HTTP transport failure: the generation that
// was called is gone (BackendGone); sent says whether the request may have reached it, and the
// message says which (the reference has one sentence for both).
func transportError(base, reason string, sent bool) *ToolError {
	msg := MsgNotSent
	if sent {
		msg = MsgTransport
	}
	e := NewError(CodeBackendUnavailable, msg, map[string]any{"tried": []string{base}, "reason": reason})
	e.BackendGone = true
	e.Sent = sent
	return e
}

// reasonReadTimeout is detail.reason for a request sent whose answer did not come within the
// request timeout (httpx's name).
const reasonReadTimeout = "ReadTimeout"

// MsgWriteTimedOut is the sentence for a write whose answer did not come in time: the backend
// may still be applying it, so "restarted" would be a guess, and a wrong one.
func MsgWriteTimedOut(timeout time.Duration) string {
	return "resmon did not answer within " + timeout.String() + "; the change may or may not have taken effect. " +
		"It was not sent again. Check with a read tool before trying again."
}

// writeTimedOut is what a write gets when it was sent and no answer came within timeout:
// never replayed, outcome unknown, and the honest reason (detail.reason stays ReadTimeout).
func writeTimedOut(cause *ToolError, timeout time.Duration) *ToolError {
	e := writeInterrupted(cause)
	e.Message = MsgWriteTimedOut(timeout)
	return e
}

// writeInterrupted is what a write gets when its backend went away after the request may have
// reached it: never replayed, outcome unknown.
func writeInterrupted(cause *ToolError) *ToolError {
	d := map[string]any{}
	for k, v := range cause.Detail {
		d[k] = v
	}
	e := NewError(CodeBackendUnavailable, MsgWriteInterrupted, d)
	e.Sent = true
	return e
}
