package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	exactjson "github.com/segmentio/encoding/json"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/sessionwire"
)

// Bounds of the line transport.
const (
	// drainWait is the default bound on how long answers to requests already read may still
	// be written after the client half-closed; the daemon derives its own from the request
	// timeout (drainBound).
	drainWait = 35 * time.Second
	// drainMargin is drainBound's slack over the longest a call can take.
	drainMargin = 5 * time.Second
	// maxInFlight bounds the requests one session has running at once (issue 10.7). Past it
	// the daemon stops reading that session's socket until an answer goes out, so further
	// calls wait in the socket and the shim's pipe (the harness's writes block), and none
	// fails. Without it one session pipelining 3,000 calls opened 3,017 descriptors and 3,010
	// backend connections. 64 is far above what an agent has in flight (a handful).
	maxInFlight = 64
)

// drainBound is how long a half-closed session waits for the answers still owed: the longest
// one tool call can take with these upstream options (the wait for the first discovery check,
// a request, the wait for a new backend, and the read's one retry), plus a margin. A fixed
// bound would cut off answers whenever --request-timeout is raised.
func drainBound(o *backend.UpstreamOptions) time.Duration {
	timeout, retry, first := backend.DefaultRequestTimeout, backend.DefaultRetryWait, backend.DefaultFirstCheckWait
	if o != nil {
		if o.Client != nil && o.Client.RequestTimeout > 0 {
			timeout = o.Client.RequestTimeout
		}
		if o.RetryWait > 0 {
			retry = o.RetryWait
		}
		if o.FirstCheckWait > 0 {
			first = o.FirstCheckWait
		}
	}
	return first + 2*timeout + retry + drainMargin
}

// lineTransport is the daemon's MCP transport on one accepted socket: newline-delimited
// JSON-RPC, framed by sessionwire.LineReader and decoded with encoding/json. It replaces
// mcp.IOTransport because one bad line (invalid JSON, a batch, an over-long line) ends an
// IOTransport session and drops the answers still in flight, and because a session here has
// more than a stream: a bound on the requests in flight, answers owed after a half-close, and
// the graceful stop with its goodbye (session_drain.go). Such a line gets a JSON-RPC error and
// the session goes on.
type lineTransport struct {
	c     net.Conn
	br    *bufio.Reader // the preamble's reader: bytes the client sent after it are already here
	drain time.Duration // bound on answers owed after a half-close; 0 means drainWait
	// frameLimit is the longest inbound line accepted, newline included; 0 means
	// sessionwire.MaxRequestLine. Tests set a small one.
	frameLimit int
	// goodbye: the client speaks the session protocol, so a graceful stop ends the stream
	// with a goodbye line (session_drain.go).
	goodbye bool

	conn *lineConn // the connection Connect made (the daemon drains it at shutdown)
}

// Connect hands the SDK the session's connection (made by open if nobody did).
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.open(), nil
}

// open makes the session's connection, once; the daemon registers it for a stop before the
// SDK connects.
func (t *lineTransport) open() *lineConn {
	if t.conn != nil {
		return t.conn
	}
	drain := t.drain
	if drain <= 0 {
		drain = drainWait
	}
	frameLimit := t.frameLimit
	if frameLimit <= 0 {
		frameLimit = sessionwire.MaxRequestLine
	}
	// t.br is the preamble's reader: the session's first lines may have come with it.
	t.conn = &lineConn{c: t.c, lines: sessionwire.NewLineReader(t.br, frameLimit), drain: drain, pending: map[jsonrpc.ID]struct{}{},
		idle: make(chan struct{}, 1), room: make(chan struct{}, 1), closed: make(chan struct{}),
		goodbye: t.goodbye, stopping: make(chan struct{})}
	return t.conn
}

// lineConn is one session's connection. Read is called by one goroutine at a time (the
// SDK's reader); Write by many.
//
// Half-close: when the shim sees stdin EOF it shuts down the socket's write side. The SDK
// treats a read error as the end of the session and cancels the requests still running, so
// `printf '<requests>' | resmongw stdio` would print nothing; Read therefore holds the EOF
// back until every request read so far has been answered (or the drain bound passes).
type lineConn struct {
	c     net.Conn
	lines *sessionwire.LineReader // reader only
	drain time.Duration           // see lineTransport.drain

	wmu sync.Mutex // one line at a time

	mu        sync.Mutex
	pending   map[jsonrpc.ID]struct{} // calls read and not yet answered
	watched   context.Context         // the context whose cancellation unblocks Read
	stopWatch func() bool

	// Graceful stop (session_drain.go): stopping is closed by stop; stopMode is its mode.
	goodbye  bool
	stopOnce sync.Once
	stopping chan struct{}
	stopMode string

	idle      chan struct{} // signalled when pending becomes empty
	room      chan struct{} // signalled when an answer leaves pending below maxInFlight
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

func (c *lineConn) SessionID() string { return "" }

// Close closes the socket once; a Read blocked on it returns.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		if c.stopWatch != nil {
			c.stopWatch()
		}
		c.mu.Unlock()
		c.closeErr = c.c.Close()
	})
	return c.closeErr
}

// Read returns the next JSON-RPC message. Lines that are not one are answered with a
// JSON-RPC error here and skipped: only the end of the stream ends the session.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.watch(ctx)
		if c.isStopping() {
			return nil, c.finish(ctx)
		}
		if err := c.waitRoom(ctx); err != nil {
			if errors.Is(err, errStopping) {
				return nil, c.finish(ctx)
			}
			return nil, err
		}
		frame, err := c.lines.ReadLine()
		if c.isStopping() {
			// Read as the stop came (or cut short by it): not started, so not ours any more.
			// The goodbye leaves it out, which tells the shim to send it to the next daemon.
			return nil, c.finish(ctx)
		}
		switch {
		case errors.Is(err, sessionwire.ErrLineTooLong):
			c.writeLine(sessionwire.LineTooLongAnswer(c.lines.Limit()))
			continue
		case err != nil:
			return nil, c.readEnded(ctx, err)
		}
		frame = trimJSONSpace(frame)
		if len(frame) == 0 {
			continue // blank line
		}
		msg, reply := decodeFrame(frame)
		if reply != nil {
			c.writeLine(reply)
			continue
		}
		if r, ok := msg.(*jsonrpc.Request); ok {
			switch {
			case r.ID.IsValid():
				c.mu.Lock()
				_, inUse := c.pending[r.ID]
				if !inUse {
					c.pending[r.ID] = struct{}{}
				}
				c.mu.Unlock()
				if inUse {
					// JSON-RPC ids must be unique among requests in flight; the SDK would drop
					// the second one unanswered, and a client must never be left waiting.
					id := r.ID
					c.writeLine(errorLine(&id, jsonrpc.CodeInvalidRequest, sessionwire.MsgIDInFlight))
					continue
				}
			case r.Method == "notifications/cancelled":
				// The client no longer waits for that answer (and the wire layer drops it),
				// so a half-close must not wait for it either.
				if id, ok := mcpserver.CancelledRequestID(r.Params); ok {
					c.answered(id)
				}
			}
		}
		return msg, nil
	}
}

// watch makes the cancellation of ctx unblock a Read in progress (through a past read
// deadline). The SDK passes the same context every time, so this registers once.
func (c *lineConn) watch(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx == c.watched {
		return
	}
	select {
	case <-c.closed:
		return
	default:
	}
	if c.stopWatch != nil {
		c.stopWatch()
	}
	c.watched = ctx
	c.stopWatch = context.AfterFunc(ctx, func() { _ = c.c.SetReadDeadline(time.Unix(1, 0)) })
}

// readEnded turns the error that ended reading into what the SDK sees. A client's EOF waits
// for the answers still owed.
func (c *lineConn) readEnded(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, io.EOF) {
		c.waitIdle(ctx)
		return io.EOF
	}
	return err
}

func (c *lineConn) waitIdle(ctx context.Context) {
	d := c.drain
	if d <= 0 {
		d = drainWait
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

// Write sends one message as one line, in one write.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err == nil {
		c.wmu.Lock()
		_, err = c.c.Write(append(data, '\n'))
		c.wmu.Unlock()
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.answered(r.ID)
	}
	return err
}

// writeLine writes a ready line (our own error replies); a failure shows on the next Read.
func (c *lineConn) writeLine(line []byte) {
	c.wmu.Lock()
	_, _ = c.c.Write(line)
	c.wmu.Unlock()
}

func (c *lineConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	n := len(c.pending)
	c.mu.Unlock()
	if n == 0 {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
	if n < maxInFlight {
		select {
		case c.room <- struct{}{}:
		default:
		}
	}
}

// waitRoom holds the reader while maxInFlight requests are running: the next frame stays
// unread (in the socket) until one is answered. It returns early only when the session ends.
func (c *lineConn) waitRoom(ctx context.Context) error {
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n < maxInFlight {
			return nil
		}
		select {
		case <-c.room:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return net.ErrClosed
		case <-c.stopping:
			return errStopping
		}
	}
}

// appendID writes a valid ID (an int64 or a string, the only kinds jsonrpc.ID holds).
func appendID(b []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10)
	case string:
		s, _ := json.Marshal(v) // a Go string always marshals
		return append(b, s...)
	}
	return append(b, "null"...)
}

// wireMessage is a frame's top level. Every field is raw, so decoding fails only on a
// syntax error; the checks that follow say what exactly is wrong. Its keys match exactly,
// as the SDK's own decoder matches them: encoding/json would take "Method" for "method",
// and a line the SDK reads as a response would run here as a call.
type wireMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decodeFrame turns a non-blank line into a request or a response, or into the error line
// that answers it.
func decodeFrame(frame []byte) (jsonrpc.Message, []byte) {
	if frame[0] != '{' {
		switch {
		case !json.Valid(frame):
			return nil, parseErrorLine
		case frame[0] == '[':
			return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message per line")
		default:
			return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
		}
	}
	// The parse checks the whole frame's syntax as it decodes (every field is raw, so a
	// syntax error or trailing bytes are the only ways it fails), with the library and the
	// flag the SDK's decoder uses, so both read the same keys.
	var w wireMessage
	if rest, err := exactjson.Parse(frame, &w, exactjson.DontMatchCaseInsensitiveStructFields); err != nil || len(rest) != 0 {
		return nil, parseErrorLine
	}
	id, idErr := parseID(w.ID)
	var replyID *jsonrpc.ID
	if idErr == "" && id.IsValid() {
		replyID = &id
	}
	if !isVersion2(w.JSONRPC) {
		return nil, errorLine(replyID, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if idErr != "" {
		// The id cannot be represented, so the reply's is null (JSON-RPC: the id could not
		// be determined); the message says why.
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, idErr)
	}
	if len(w.Method) > 0 {
		var method string
		if w.Method[0] != '"' || json.Unmarshal(w.Method, &method) != nil {
			return nil, errorLine(replyID, jsonrpc.CodeInvalidRequest, `Invalid Request: "method" must be a string`)
		}
		if !id.IsValid() && bytes.Equal(trimJSONSpace(w.ID), []byte("null")) {
			// JSON-RPC 2.0 allows a null id on a request but discourages it, and the SDK has
			// no way to answer one (it would be taken for a notification and go unanswered):
			// it gets an answer saying so, as the app's server answers it at all.
			return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, `Invalid Request: "id" is null; use a string or an integer (or leave "id" out for a notification)`)
		}
		if why := paramsProblem(method, w.Params); why != "" {
			return nil, errorLine(replyID, jsonrpc.CodeInvalidParams, "Invalid params: "+why)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	// No method: a response to a request of ours.
	if !id.IsValid() {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, `Invalid Request: a message without "method" must be a response with an "id"`)
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if len(w.Error) > 0 && !bytes.Equal(w.Error, []byte("null")) {
		var we jsonrpc.Error
		if w.Error[0] != '{' || json.Unmarshal(w.Error, &we) != nil {
			return nil, errorLine(replyID, jsonrpc.CodeInvalidRequest, `Invalid Request: "error" must be an error object`)
		}
		resp.Error = &we
	}
	return resp, nil
}

// paramShape is one params member the SDK decodes into a typed field: the first byte its
// JSON must start with, and how to say so.
type paramShape struct {
	name  string
	start byte
	what  string
}

// paramShapes are, per method, the members whose wrong type the SDK's decoder would report in
// Go's words; "_meta" is checked on every method.
var paramShapes = map[string][]paramShape{
	"tools/call": {{"name", '"', "a string (the tool's name)"}, {"arguments", '{', "an object"}},
	"initialize": {{"protocolVersion", '"', "a string"}, {"capabilities", '{', "an object"}, {"clientInfo", '{', "an object"}},
	"tools/list": {{"cursor", '"', "a string"}},
}

// paramsProblem says, in words a person reads, what is wrong with the shape of a request's
// params, or "" when the SDK may decode them: its decoder's own errors name Go types ("json:
// cannot unmarshal string into Go struct field CallToolParamsRaw.name of type string"). Only
// the shapes the SDK would trip on are checked; what the arguments hold is the tools' job.
func paramsProblem(method string, params json.RawMessage) string {
	params = trimJSONSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return ""
	}
	var members map[string]json.RawMessage
	if params[0] != '{' || json.Unmarshal(params, &members) != nil {
		return `"params" must be an object`
	}
	for _, p := range append([]paramShape{{"_meta", '{', "an object"}}, paramShapes[method]...) {
		v := trimJSONSpace(members[p.name])
		if len(v) > 0 && !bytes.Equal(v, []byte("null")) && v[0] != p.start {
			return `"` + p.name + `" must be ` + p.what
		}
	}
	return ""
}

// maxExactID is the largest integer id kept exactly: the SDK builds integer ids from a float64
// (jsonrpc.MakeID), which holds every integer up to 2^53 and no larger one reliably.
const maxExactID = 1 << 53

// Why an id is refused (the reply's message).
const (
	idNotAnID    = `Invalid Request: "id" must be a string, an integer or null`
	idOutOfRange = `Invalid Request: "id" must be an integer between -9007199254740992 and 9007199254740992 (2^53), or a string; larger integers cannot be answered with the same id`
)

// parseID reads an id: absent or null (no id), a string, or an integer, kept exactly. An
// integral number written as a float (1.0, 1e3) is that integer. An integer beyond ±2^53
// is refused rather than answered under a rounded, different id; a fraction is no id at
// all. The refusal is the error message ("" when the id is fine).
func parseID(raw json.RawMessage) (jsonrpc.ID, string) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return jsonrpc.ID{}, ""
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, idNotAnID
		}
		id, err := jsonrpc.MakeID(s)
		if err != nil {
			return jsonrpc.ID{}, idNotAnID
		}
		return id, ""
	case c == '-' || c >= '0' && c <= '9':
		var f float64
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			if n > maxExactID || n < -maxExactID {
				return jsonrpc.ID{}, idOutOfRange
			}
			f = float64(n) // exact: |n| <= 2^53
		} else if errors.Is(err, strconv.ErrRange) {
			return jsonrpc.ID{}, idOutOfRange // an integer beyond int64
		} else {
			f, err = strconv.ParseFloat(string(raw), 64)
			switch {
			case err != nil && !errors.Is(err, strconv.ErrRange), f != math.Trunc(f):
				return jsonrpc.ID{}, idNotAnID
			case errors.Is(err, strconv.ErrRange), math.Abs(f) > maxExactID:
				return jsonrpc.ID{}, idOutOfRange
			}
		}
		id, err := jsonrpc.MakeID(f)
		if err != nil {
			return jsonrpc.ID{}, idNotAnID
		}
		return id, ""
	}
	return jsonrpc.ID{}, idNotAnID
}

func isVersion2(raw json.RawMessage) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s == "2.0"
}

var parseErrorLine = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n")

// errorLine is a JSON-RPC error reply as one line; id nil means "id":null.
func errorLine(id *jsonrpc.ID, code int, message string) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	if id != nil {
		b = appendID(b, *id)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	m, _ := json.Marshal(message)
	b = append(b, m...)
	return append(b, "}}\n"...)
}

// trimJSONSpace trims the four JSON whitespace bytes (a "\r" of "\r\n" among them).
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
