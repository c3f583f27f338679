package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/tools"
)

// WrapTransport makes the SDK's messages conform to the reference server on the wire, on the
// JSON of the responses (the SDK's types have no room for these details):
//
//   - tools/list: every tool object gets a top-level "requires_confirmation" (from the table,
//     by name), and the tools come in table order (the SDK sorts them by name);
//   - tools/call: a successful result carries "isError":false (the SDK omits a false one);
//   - an error the SDK sends with JSON-RPC code 0 (a plain Go error, such as a second
//     initialize) goes out as -32600 Invalid Request, its message kept;
//   - a request the client cancelled (notifications/cancelled) gets no response at all (MCP:
//     the receiver SHOULD NOT respond; the SDK still would).
//
// Every other message passes through untouched.
//
// Over an SDK transport, the negotiated protocol version cannot be forwarded to the inner
// connection (the SDK does it through an unexported method), so that connection would accept a
// JSON-RPC batch on versions that forbid them; the daemon's own line connection refuses batches
// on every version.
func WrapTransport(t mcp.Transport, tools []tools.Tool) mcp.Transport {
	w := &wireTransport{inner: t, flags: make(map[string]bool, len(tools)), order: make(map[string]int, len(tools))}
	for i, tl := range tools {
		w.flags[tl.Name] = tl.RequiresConfirmation
		w.order[tl.Name] = i
	}
	return w
}

type wireTransport struct {
	inner mcp.Transport
	flags map[string]bool
	order map[string]int
}

func (w *wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, t: w, inflight: map[jsonrpc.ID]inflight{}}, nil
}

// SupportsProtocolVersion forwards the inner transport's answer (mcp.ProtocolVersionSupporter).
func (w *wireTransport) SupportsProtocolVersion(v string) bool {
	if p, ok := w.inner.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(v)
	}
	return true
}

// requestKind is what a response needs rewriting for.
type requestKind uint8

const (
	kindOther requestKind = iota
	kindInitialize
	kindToolsList
	kindToolsCall
)

// inflight is one request read and not yet answered.
type inflight struct {
	kind      requestKind
	cancelled bool
}

const methodCancelled = "notifications/cancelled"

type wireConn struct {
	mcp.Connection
	t *wireTransport

	// inflight holds every request read and not yet answered: an entry goes when its response
	// is written, so the map is bounded by the requests in flight (which the SDK serves
	// concurrently anyway), whatever the client sends.
	mu       sync.Mutex
	inflight map[jsonrpc.ID]inflight
	// legacy is set once initialize negotiated a protocol version that has no cache fields
	// (every version before 2026-07-28; the stateless protocol has no initialize at all).
	legacy bool
}

// cacheFields are the SDK's cache-control fields on list results ("ttlMs", "cacheScope"). They
// belong to the 2026-07-28 protocol; on a session that negotiated an older version they are
// fields the protocol does not have, and the reference never sends them.
var cacheFields = []string{"ttlMs", "cacheScope"}

// firstCacheVersion is the first protocol version whose list results carry cacheFields.
const firstCacheVersion = "2026-07-28"

// noteProtocol records the version an initialize answer negotiated (versions are dates, so
// they compare as strings).
func (c *wireConn) noteProtocol(result json.RawMessage) {
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &ir) != nil || ir.ProtocolVersion == "" {
		return
	}
	c.mu.Lock()
	c.legacy = ir.ProtocolVersion < firstCacheVersion
	c.mu.Unlock()
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.track(msg)
	}
	return msg, err
}

// track notes a request the SDK will serve, and a cancellation of any request in flight.
func (c *wireConn) track(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case req.ID.IsValid():
			c.mu.Lock()
			if _, dup := c.inflight[req.ID]; !dup {
				c.inflight[req.ID] = inflight{kind: kindOf(req.Method)}
			}
			c.mu.Unlock()
		case req.Method == methodCancelled:
			if id, ok := CancelledRequestID(req.Params); ok {
				c.mu.Lock()
				// Only a request still in flight: a cancellation that crossed its response
				// is moot, and remembering it would grow the map. initialize cannot be
				// cancelled (MCP), so its answer always goes out.
				if f, ok := c.inflight[id]; ok && f.kind != kindInitialize {
					f.cancelled = true
					c.inflight[id] = f
				}
				c.mu.Unlock()
			}
		}
	}
}

func kindOf(method string) requestKind {
	switch method {
	case methodCallTool:
		return kindToolsCall
	case "tools/list":
		return kindToolsList
	case "initialize":
		return kindInitialize
	}
	return kindOther
}

// CancelledRequestID reads the requestId of a notifications/cancelled's params, as the
// jsonrpc.ID the request was read with (the SDK keeps integer ids as int64).
func CancelledRequestID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	if f, ok := p.RequestID.(float64); ok && f != math.Trunc(f) {
		return jsonrpc.ID{}, false // 1.5 is no request's id; do not let it cancel 1
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil && id.IsValid()
}

func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	f, tracked := c.inflight[resp.ID]
	if tracked {
		delete(c.inflight, resp.ID)
	}
	c.mu.Unlock()
	switch {
	case f.cancelled:
		return nil // the client stopped waiting; MCP asks us not to answer
	case resp.Error != nil:
		if e := invalidRequestError(resp.Error); e != nil {
			r := *resp
			r.Error = e
			msg = &r
		}
	case f.kind == kindInitialize:
		c.noteProtocol(resp.Result)
	case f.kind == kindToolsList:
		c.mu.Lock()
		var drop []string
		if c.legacy {
			drop = cacheFields
		}
		c.mu.Unlock()
		if out, err := addConfirmation(resp.Result, c.t.flags, c.t.order, drop...); err == nil {
			r := *resp
			r.Result = out
			msg = &r
		}
	case f.kind == kindToolsCall:
		if out, ok := withIsErrorFalse(resp.Result); ok {
			r := *resp
			r.Result = out
			msg = &r
		}
	}
	return c.Connection.Write(ctx, msg)
}

// invalidRequestError returns the -32600 error to send instead of err when err would go out
// with code 0 (how the SDK encodes a plain Go error: a duplicate initialize, a method called
// before initialization), or nil when err has a code of its own.
func invalidRequestError(err error) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok {
		if we.Code != 0 {
			return nil
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: we.Message, Data: we.Data}
	}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) && wrapped.Code != 0 {
		return nil // the SDK keeps a wrapped error's code
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
}

var isErrorKey = []byte(`"isError"`)

// withIsErrorFalse adds "isError":false as the last key of a tools/call result that has no
// top-level "isError" (the reference always sends the key; the SDK omits a false one). It
// copies the bytes once: no decoding unless the key's name occurs somewhere in the result,
// which on success it almost never does (text content escapes its quotes).
func withIsErrorFalse(result json.RawMessage) (json.RawMessage, bool) {
	body := trimSpace(result)
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, false
	}
	if bytes.Contains(body, isErrorKey) && hasTopLevelKey(body, "isError") {
		return nil, false
	}
	out := make([]byte, 0, len(body)+len(`,"isError":false`))
	out = append(out, body[:len(body)-1]...)
	if len(trimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"isError":false}`...)
	return out, true
}

// hasTopLevelKey reports whether the JSON object obj has key at its top level (an invalid
// object counts as having it, so it is left alone).
func hasTopLevelKey(obj []byte, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return true
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		if k, _ := tok.(string); k == key {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return true
		}
	}
	return false
}

// trimSpace trims JSON whitespace.
func trimSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

var errNotToolList = errors.New("not a tools/list result")

type toolSpan struct {
	raw   []byte
	order int
}

// addConfirmation rewrites a tools/list result: each tool object known to the table gains
// "requires_confirmation" as its last key, the array is put in table order, and the top-level
// keys named in drop are left out. Every other byte — the other keys and their values, and
// each tool object's own keys — is kept as it was.
func addConfirmation(result json.RawMessage, flags map[string]bool, order map[string]int, drop ...string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotToolList
	}
	out := make([]byte, 0, len(result)+len(order)*len(`,"requires_confirmation":false`))
	out = append(out, '{')
	sawTools := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if slices.Contains(drop, key) {
			continue
		}
		if key == "tools" {
			if value, err = confirmedTools(value, flags, order); err != nil {
				return nil, err
			}
			sawTools = true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(key)
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, value...)
	}
	if !sawTools {
		return nil, errNotToolList
	}
	return append(out, '}'), nil
}

// confirmedTools rewrites the tools array of a tools/list result (see addConfirmation).
func confirmedTools(arr json.RawMessage, flags map[string]bool, order map[string]int) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errNotToolList
	}
	var tools []toolSpan
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		tools = append(tools, withConfirmation(raw, flags, order, len(tools)))
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, err
	}
	slices.SortStableFunc(tools, func(a, b toolSpan) int { return a.order - b.order })
	out := make([]byte, 0, len(arr)+len(tools)*len(`,"requires_confirmation":false`))
	out = append(out, '[')
	for i, t := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, t.raw...)
	}
	return append(out, ']'), nil
}

// withConfirmation appends the flag to one tool object. Tools the table does not know keep
// their bytes and sort after the known ones, in their original order.
func withConfirmation(raw json.RawMessage, flags map[string]bool, order map[string]int, seq int) toolSpan {
	var head struct {
		Name string `json:"name"`
	}
	span := toolSpan{raw: raw, order: len(order) + seq}
	if json.Unmarshal(raw, &head) != nil {
		return span
	}
	flag, ok := flags[head.Name]
	if !ok {
		return span
	}
	body := bytes.TrimSpace(raw)
	if len(body) < 2 || body[len(body)-1] != '}' {
		return span
	}
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	b := make([]byte, 0, len(body)+32)
	b = append(b, body[:len(body)-1]...)
	if len(inner) > 0 {
		b = append(b, ',')
	}
	b = append(b, `"requires_confirmation":`...)
	b = strconv.AppendBool(b, flag)
	b = append(b, '}')
	return toolSpan{raw: b, order: order[head.Name]}
}
