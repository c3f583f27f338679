package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WrapTransport puts resmon's own tools/list extension on the wire: every tool object gets a
// top-level "requires_confirmation" (from the table, by name), and the tools come in table
// order (the SDK sorts them by name). mcp.Tool has no room for extra keys, so this is done on
// the JSON of the matching responses; every other message passes through untouched.
//
// Over an SDK transport, the negotiated protocol version cannot be forwarded to the inner
// connection (the SDK does it through an unexported method), so that connection would accept a
// JSON-RPC batch on versions that forbid them; the daemon's own line connection refuses batches
// on every version.
func WrapTransport(t mcp.Transport, tools []Tool) mcp.Transport {
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
	return &wireConn{Connection: c, t: w, pending: map[jsonrpc.ID]struct{}{}}, nil
}

// SupportsProtocolVersion forwards the inner transport's answer (mcp.ProtocolVersionSupporter).
func (w *wireTransport) SupportsProtocolVersion(v string) bool {
	if p, ok := w.inner.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(v)
	}
	return true
}

type wireConn struct {
	mcp.Connection
	t *wireTransport

	waiting atomic.Int32 // len(pending), so ordinary writes skip the lock
	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{}
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		if _, dup := c.pending[req.ID]; !dup {
			c.pending[req.ID] = struct{}{}
			c.waiting.Add(1)
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.waiting.Load() > 0 {
		if resp, ok := msg.(*jsonrpc.Response); ok && c.take(resp.ID) && resp.Error == nil {
			if out, err := addConfirmation(resp.Result, c.t.flags, c.t.order); err == nil {
				r := *resp
				r.Result = out
				msg = &r
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *wireConn) take(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return false
	}
	delete(c.pending, id)
	c.waiting.Add(-1)
	return true
}

var errNotToolList = errors.New("not a tools/list result")

type toolSpan struct {
	raw   []byte
	order int
}

// addConfirmation rewrites a tools/list result: each tool object known to the table gains
// "requires_confirmation" as its last key, and the array is put in table order. Bytes outside
// the tools array, and inside each tool object, are kept as they were.
func addConfirmation(result json.RawMessage, flags map[string]bool, order map[string]int) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotToolList
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key, _ := tok.(string); key != "tools" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil, errNotToolList
		}
		arrStart := dec.InputOffset() - 1
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
		arrEnd := dec.InputOffset()
		slices.SortStableFunc(tools, func(a, b toolSpan) int { return a.order - b.order })

		out := make([]byte, 0, len(result)+len(tools)*len(`,"requires_confirmation":false`))
		out = append(out, result[:arrStart]...)
		out = append(out, '[')
		for i, t := range tools {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, t.raw...)
		}
		out = append(out, ']')
		out = append(out, result[arrEnd:]...)
		return out, nil
	}
	return nil, errNotToolList
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
