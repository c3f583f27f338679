package proxy

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: once a session's first tools/call has gone through the SDK (so the SDK has
// initialized the session and the middleware knows this connection), the wire wrapper answers
// later tools/call requests for known tools itself: one goroutine per call, the same tool run,
// result and record as the middleware and handler (dispatcher.fastCall), the response written
// as the SDK would write it. go-sdk's per-request dispatch (a goroutine hand-off, params and
// result through its JSON layer, the middleware chain) is the largest CPU cost of a call in
// the daemon. Everything else, and every tools/call the fast path is not sure about, still
// goes through the SDK.

// fastConns finds a wire connection by the session id it gives the SDK (wireConn.SessionID),
// so the middleware, which sees only the SDK's session, can hand it the dispatcher.
var fastConns sync.Map // string → *wireConn

var fastSeq atomic.Uint64

// fastServed counts the calls the fast path answered (tests tell the two paths apart by it).
var fastServed atomic.Int64

// attachFast gives the connection behind session id the dispatcher serving it.
func attachFast(id string, d *dispatcher) {
	if id == "" {
		return
	}
	if v, ok := fastConns.Load(id); ok {
		v.(*wireConn).fast.CompareAndSwap(nil, d)
	}
}

// SessionID names this connection for attachFast. The SDK uses a stdio-like connection's id
// only in its own log lines; the inner connection's id, if it has one, is kept.
func (c *wireConn) SessionID() string {
	if id := c.Connection.SessionID(); id != "" {
		return id
	}
	return c.id
}

// fastParams is what the fast path reads of tools/call params.
type fastParams struct {
	Name      *string                    `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
}

// fastParamsRead is what tryFast needs of tools/call params: the name (nil when absent or
// null), the arguments as they came, and whether _meta holds a protocol field.
type fastParamsRead struct {
	name         *string
	arguments    json.RawMessage
	protocolMeta bool
}

// readFastParams reads params as json.Unmarshal into fastParams would (ok false where it
// fails), scanning the object once where every key is plain (ObjectMembers) and going through
// encoding/json otherwise.
func readFastParams(params json.RawMessage) (fastParamsRead, bool) {
	var r fastParamsRead
	if len(params) == 0 || !json.Valid(params) {
		return r, false
	}
	plain, typed := true, true
	scanned := ObjectMembers(params, func(key, value []byte) {
		switch string(key) {
		case "name":
			switch {
			case string(value) == "null":
				r.name = nil
			case value[0] == '"':
				s, ok := PlainJSONString(value)
				if !ok && json.Unmarshal(value, &s) != nil {
					typed = false
				}
				r.name = &s
			default:
				typed = false
			}
		case "arguments":
			r.arguments = value
		case "_meta":
			switch {
			case string(value) == "null":
				r.protocolMeta = false // json.Unmarshal sets the map to nil
			case value[0] == '{':
				// A repeated _meta adds its keys to the map the first one made.
				if !ObjectMembers(value, func(k, _ []byte) {
					if !PlainJSONKey(k) {
						plain = false
					} else if strings.HasPrefix(string(k), "io.modelcontextprotocol/") {
						r.protocolMeta = true
					}
				}) {
					plain = false
				}
			default:
				typed = false
			}
		default:
			if !PlainJSONKey(key) || FoldsTo(key, "name") || FoldsTo(key, "arguments") || FoldsTo(key, "_meta") {
				plain = false
			}
		}
	})
	if scanned && plain {
		return r, typed
	}
	// Not a plain object (or not an object at all): encoding/json decides.
	var p fastParams
	if json.Unmarshal(params, &p) != nil {
		return fastParamsRead{}, false
	}
	r = fastParamsRead{name: p.Name, arguments: p.Arguments}
	for k := range p.Meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			r.protocolMeta = true
		}
	}
	return r, true
}

// tryFast serves req on the fast path and reports whether it did. It declines (the SDK
// serves the request) unless the request is a tools/call with an id not already in flight,
// params that decode plainly, a tool name the table has, and no protocol fields in _meta
// (a per-request protocol version, SEP-2575, changes how the SDK answers).
func (c *wireConn) tryFast(req *jsonrpc.Request) bool {
	d := c.fast.Load()
	if d == nil || req.Method != methodCallTool || !req.ID.IsValid() {
		return false
	}
	p, ok := readFastParams(req.Params)
	if !ok || p.name == nil || p.protocolMeta {
		return false
	}
	t, ok := d.byName[*p.name]
	if !ok || t.RequiresConfirmation {
		return false // writes go through the SDK, which asks the person (confirm.go)
	}
	ctx, cancel := context.WithCancel(c.base)
	c.mu.Lock()
	if _, dup := c.inflight[req.ID]; dup || c.closed {
		c.mu.Unlock()
		cancel()
		return false
	}
	c.inflight[req.ID] = inflight{kind: kindToolsCall, cancel: cancel}
	c.fastWG.Add(1)
	c.mu.Unlock()
	go c.serveFast(ctx, cancel, d, t, req.ID, p.arguments)
	return true
}

func (c *wireConn) serveFast(ctx context.Context, cancel context.CancelFunc, d *dispatcher, t *Tool, id jsonrpc.ID, args json.RawMessage) {
	defer c.fastWG.Done()
	defer cancel()
	fastServed.Add(1)
	res := d.fastCall(ctx, t, args)
	out, err := encodeToolResult(res)
	c.mu.Lock()
	f := c.inflight[id]
	delete(c.inflight, id)
	c.mu.Unlock()
	if f.cancelled {
		return // the client stopped waiting; MCP asks us not to answer
	}
	resp := &jsonrpc.Response{ID: id, Result: out}
	if err != nil {
		// Not reachable for the results toolResult builds; answered as the SDK would a
		// handler that failed.
		resp = &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
	}
	_ = c.Connection.Write(context.Background(), resp)
}

// encodeToolResult is json.Marshal of res with "isError" always present (withIsErrorFalse),
// written directly for the one shape toolResult builds (a single text item and IsError):
// the SDK's MarshalJSON methods marshal the result twice through reflection and then
// re-scan and copy their output, a visible part of a call's CPU. Any other shape takes the
// general route.
func encodeToolResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	if tc, ok := plainText(res); ok {
		// json.Marshal of a string escapes exactly as the SDK's encoding of the text field
		// does (HTML characters, invalid UTF-8, U+2028/U+2029).
		text, err := json.Marshal(tc.Text)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(text)+len(`{"content":[{"type":"text","text":}],"isError":false}`))
		out = append(out, `{"content":[{"type":"text","text":`...)
		out = append(out, text...)
		out = append(out, `}],"isError":`...)
		out = strconv.AppendBool(out, res.IsError)
		return append(out, '}'), nil
	}
	out, err := json.Marshal(res)
	if err == nil {
		if with, ok := withIsErrorFalse(out); ok {
			out = with
		}
	}
	return out, err
}

// plainText reports whether res is a single text item with nothing else set.
func plainText(res *mcp.CallToolResult) (*mcp.TextContent, bool) {
	if res == nil || res.Meta != nil || len(res.Content) != 1 || res.StructuredContent != nil ||
		res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc == nil || tc.Meta != nil || tc.Annotations != nil {
		return nil, false
	}
	return tc, true
}

// cancelFast cancels the fast-path calls in flight: the client can no longer read their
// answers (its stream failed), as the SDK cancels its own handlers then.
func (c *wireConn) cancelFast() {
	c.mu.Lock()
	for _, f := range c.inflight {
		if f.cancel != nil {
			f.cancel()
		}
	}
	c.mu.Unlock()
}

// closeFast ends the fast path of a connection the SDK is closing: no new call takes it, and
// the calls in flight are answered first (the SDK's Close, too, waits for its handlers; each
// call is bounded by its request timeout).
func (c *wireConn) closeFast() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	fastConns.Delete(c.id)
	c.fastWG.Wait()
	c.stop()
}

func newFastID() string { return "resmongw-wire-" + strconv.FormatUint(fastSeq.Add(1), 10) }
