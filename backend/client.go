package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/scrub"
)

// Client defaults (reference §1: 30 s per tool request, 3 s to connect).
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultConnectTimeout = 3 * time.Second
	// DefaultMaxResponseBytes bounds one answer. The contract's token-efficiency rule keeps
	// every default answer under 8 KiB (the largest today is ~6 KiB), and no route a tool
	// calls returns more than a page of results, so an answer 500 times that is no legitimate
	// answer; refusing it keeps one misbehaving backend from holding the daemon's memory.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxConns bounds the connections one generation holds open for reads: excess
	// calls wait for a connection (within their request timeout).
	DefaultMaxConns = 8
	// maxWriteConns bounds the connections writes use at once (one each, see writeClient).
	maxWriteConns = 2
	// releaseAbove is the answer size after which the daemon hands freed memory back to the
	// system soon, instead of keeping it for the next big answer that may never come.
	releaseAbove = 1 << 20

	// maxErrorBody bounds how much of an error reply is read: only its `detail` matters.
	maxErrorBody = 64 << 10

	// idleConnTimeout is how long a pooled connection may sit unused: below uvicorn's 5 s
	// keep-alive timeout, so we drop an idle connection before the backend does. A request
	// sent on a connection the server is closing fails; net/http resends only a read that
	// had no answer byte yet, and a write never rides a pooled connection (writeClient).
	idleConnTimeout = 4 * time.Second
)

// ClientOptions tunes a Client; the zero value (or nil) means the defaults.
type ClientOptions struct {
	RequestTimeout   time.Duration // whole request, body included; default 30 s
	ConnectTimeout   time.Duration // TCP connect; default 3 s
	MaxResponseBytes int64         // larger success bodies become upstream_error; default 4 MiB
	MaxConns         int           // connections for reads; default 8
}

func (o *ClientOptions) withDefaults() ClientOptions {
	var r ClientOptions
	if o != nil {
		r = *o
	}
	if r.RequestTimeout <= 0 {
		r.RequestTimeout = DefaultRequestTimeout
	}
	if r.ConnectTimeout <= 0 {
		r.ConnectTimeout = DefaultConnectTimeout
	}
	if r.MaxResponseBytes <= 0 {
		r.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if r.MaxConns <= 1 {
		r.MaxConns = DefaultMaxConns
	}
	return r
}

// Client calls one verified backend generation. It owns its connection pool, so dropping a
// generation (Close) can never leave a keep-alive connection to a dead instance in use.
type Client struct {
	backend   *discovery.Backend
	base      string
	auth      string
	opts      ClientOptions
	transport *http.Transport
	http      *http.Client
	closed    atomic.Bool

	writeOnce sync.Once
	writeHTTP *http.Client // see writeClient
}

var errRequestTimeout = errors.New("request timeout")

// NewClient returns a client for b. The token is registered with scrub so that it can never
// leave the process even if something echoes it.
func NewClient(b *discovery.Backend, opts *ClientOptions) *Client {
	o := opts.withDefaults()
	scrub.Add(b.Token.Reveal())
	base := strings.TrimRight(b.BaseURL, "/")
	if base == "" {
		// Always the IP literal, so Host is 127.0.0.1:<port>, which the backend's guard requires.
		base = "http://127.0.0.1:" + strconv.Itoa(b.Port)
	}
	t := &http.Transport{
		Proxy:       nil, // never route loopback traffic through an environment proxy
		DialContext: (&discovery.VerifiedDialer{Dialer: net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}}).DialContext,
		// One host per client: every connection it may open may also wait idle for the next
		// call, and none longer than idleConnTimeout.
		MaxIdleConns:          o.MaxConns,
		MaxIdleConnsPerHost:   o.MaxConns,
		IdleConnTimeout:       idleConnTimeout,
		ResponseHeaderTimeout: 0, // bounded by the request context instead
		DisableCompression:    true,
	}
	c := &Client{
		backend:   b,
		base:      base,
		auth:      "Bearer " + b.Token.Reveal(),
		opts:      o,
		transport: t,
		http: &http.Client{
			Transport: t,
			// A redirect is never expected; following one could carry the request elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	// A bound per generation: one session pipelining thousands of calls must not open
	// thousands of connections to the app. Waiting requests are served in order.
	t.MaxConnsPerHost = o.MaxConns
	return c
}

// writeClient sends writes, each on a connection opened for it: a clone of the pool's
// transport (same dialer and limits) with keep-alives off. A pooled connection may be one the
// backend has already closed (it crashed or restarted a moment ago); a write sent on it fails
// only after its bytes are out, so its outcome would look unknown although the backend never
// read it. On a fresh connection, a refused dial is certainly "not sent", and a failure after
// the request is written is truly "outcome unknown". Writes are rare; the handshake is cheap.
func (c *Client) writeClient() *http.Client {
	c.writeOnce.Do(func() {
		t := c.transport.Clone()
		t.DisableKeepAlives = true
		t.MaxConnsPerHost = maxWriteConns
		c.writeHTTP = &http.Client{Transport: t, CheckRedirect: c.http.CheckRedirect}
	})
	return c.writeHTTP
}

// Backend is the generation this client calls.
func (c *Client) Backend() *discovery.Backend { return c.backend }

// BaseURL is the base every request goes to.
func (c *Client) BaseURL() string { return c.base }

// Close drops the idle connections. In-flight calls finish; their connections are closed as
// they come back (see Call), so nothing keeps talking to a replaced instance.
func (c *Client) Close() {
	c.closed.Store(true)
	c.transport.CloseIdleConnections()
}

func (c *Client) note(ctx context.Context) {
	updateCallInfo(ctx, func(ci *CallInfo) {
		ci.Requests++
		ci.BaseURL = c.base
		ci.RuntimeID = c.backend.RuntimeID()
	})
}

// Call performs r against this generation. It returns the decoded success body (JSON numbers
// as json.Number, so ids round-trip exactly; a string for a non-JSON body; nil when empty) or
// a *ToolError mapped per reference §3.
func (c *Client) Call(ctx context.Context, r *Request) (any, error) {
	c.note(ctx)
	defer func() {
		if c.closed.Load() {
			c.transport.CloseIdleConnections()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, cancelledError(c.base)
	}

	rctx, cancel := context.WithTimeoutCause(ctx, c.opts.RequestTimeout, errRequestTimeout)
	defer cancel()
	var gotConn, wrote atomic.Bool
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
		// The whole request is on the wire: from here the backend may act on it.
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})

	req, terr := c.newRequest(rctx, r)
	if terr != nil {
		return nil, terr
	}
	hc := c.http
	if r.Write {
		hc = c.writeClient()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.failure(ctx, rctx, err, sendState{connected: gotConn.Load(), written: wrote.Load()})
	}
	defer resp.Body.Close()

	// resmon never redirects a route the tools call (redirects are not followed); a 3xx is as
	// unexpected as a 405 and must not turn into an empty success.
	if resp.StatusCode >= 300 {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil && len(body) == 0 {
			// The status alone decides the code; a torn body only loses the detail.
			body = nil
		}
		return nil, MapStatus(resp.StatusCode, resp.Header, body, r.ExpectedRuntimeID, c.base)
	}

	limit := c.opts.MaxResponseBytes
	if resp.ContentLength > limit {
		// Refused before a byte of it is read; closing the body closes the connection.
		return nil, NewError(CodeUpstreamError, MsgTooLarge(limit), nil)
	}
	body, n, err := readBody(resp.Body, resp.ContentLength, limit)
	if n > releaseAbove {
		defer releaseMemorySoon()
	}
	if err != nil {
		return nil, c.failure(ctx, rctx, err, sendState{connected: true, written: true})
	}
	if n > limit {
		return nil, NewError(CodeUpstreamError, MsgTooLarge(limit), nil)
	}
	return c.decodeAnswer(body, resp.Header.Get("Content-Type"), r)
}

// decodeAnswer decodes a success body and checks the identity an expected call asks for.
func (c *Client) decodeAnswer(body []byte, contentType string, r *Request) (any, error) {
	v, terr := decodeSuccess(body, contentType)
	if terr != nil {
		return nil, terr
	}
	if r.ExpectedRuntimeID != "" {
		// v2.3: a reply to an expected call must prove it came from that instance; otherwise
		// its content is discarded, never relayed.
		if terr := CheckIdentity(v, r.ExpectedRuntimeID); terr != nil {
			return nil, terr
		}
	}
	return v, nil
}

// readBody reads an answer of at most limit bytes: its body, or n = limit+1 when it is
// longer (then no more than that was read, and nothing is kept). A body of announced length
// is read into one buffer of that size; one of unknown length into chunks that double up to
// 1 MiB, joined at the end, so a legal answer costs twice its size at most and a refused one
// no more than the bound, whatever it claims or sends.
func readBody(r io.Reader, length, limit int64) (body []byte, n int64, err error) {
	size := int64(512)
	if length >= 0 && length <= limit {
		size = length + 1 // +1: the end is found without another buffer
	}
	var full [][]byte
	buf := make([]byte, size)
	used := 0
	for {
		if used == len(buf) {
			full = append(full, buf)
			size = max(1, min(2*size, 1<<20, limit+1-n))
			buf, used = make([]byte, size), 0
		}
		m, rerr := r.Read(buf[used:])
		used += m
		n += int64(m)
		if n > limit {
			return nil, n, nil
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, n, rerr
		}
	}
	if len(full) == 0 {
		return buf[:used], n, nil
	}
	body = make([]byte, 0, n)
	for _, b := range full {
		body = append(body, b...)
	}
	return append(body, buf[:used]...), n, nil
}

// releasePending is set while a release is scheduled, so a burst of big answers costs one.
var releasePending atomic.Bool

// releaseMemorySoon returns the heap freed by big answers to the system shortly after them
// (a forced GC, then the pages handed back), so the daemon's resident size comes down in a
// second, not the minutes the background scavenger would take. Big answers are rare; the
// delay lets a burst of them finish first.
func releaseMemorySoon() {
	if releasePending.Swap(true) {
		return
	}
	time.AfterFunc(time.Second, func() {
		releasePending.Store(false)
		debug.FreeOSMemory()
	})
}

func (c *Client) newRequest(ctx context.Context, r *Request) (*http.Request, *ToolError) {
	url := c.base + r.Path
	if len(r.Query) > 0 {
		url += "?" + r.Query.Encode()
	}
	var body io.Reader
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return nil, NewError(CodeInternalError, "The resmon MCP server could not encode the request body.", map[string]any{"reason": "EncodeError"})
		}
		body = bytes.NewReader(b)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, NewError(CodeInternalError, "The resmon MCP server built an invalid request.", map[string]any{"reason": "InvalidURL"})
	}
	// No Origin header, ever: the backend's guard judges a request without Origin on its token
	// alone, and one with an unregistered Origin is refused.
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// cancelledError is returned when the caller gave up (the MCP client cancelled or went away).
// It is not BackendGone: the backend did nothing wrong.
func cancelledError(base string) *ToolError {
	tried := []string{}
	if base != "" {
		tried = append(tried, base)
	}
	return NewError(CodeBackendUnavailable, MsgCancelled, map[string]any{"tried": tried, "reason": "Cancelled"})
}

// decodeSuccess applies the reference's success rule: empty → nil; JSON → the value; otherwise
// the text (exports such as BibTeX). A reply that claims to be JSON but is not is an error,
// never an empty or stringly success.
func decodeSuccess(body []byte, contentType string) (any, *ToolError) {
	if len(body) == 0 {
		return nil, nil
	}
	if v, ok := decodeJSON(body); ok {
		if v == nil {
			return JSONNull, nil // not an empty body (see jsonNullReply)
		}
		return v, nil
	}
	if isJSONType(contentType) {
		return nil, NewError(CodeUpstreamError, MsgNotJSON, nil)
	}
	if isHTMLType(contentType) {
		// No route a tool calls answers with a web page: something else is on the port, or a
		// proxy answered. Never relayed as an export's text.
		return nil, NewError(CodeUpstreamError, MsgWrongShape("data", "a web page"), map[string]any{"received": "a web page"})
	}
	return string(body), nil
}

func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	return v, true
}

func isHTMLType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// ValidRuntimeID reports whether s is a canonical lowercase UUID4, the only runtime id form
// contract v2.3 accepts (reference §7.2).
func ValidRuntimeID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
			continue
		case 14:
			if ch != '4' {
				return false
			}
			continue
		case 19:
			if ch != '8' && ch != '9' && ch != 'a' && ch != 'b' {
				return false
			}
			continue
		}
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
			return false
		}
	}
	return true
}

// ValidIdentity reports whether x is a supported identity object (reference §7.2): the five
// keys present, contract_version the integer 1 (not true, not 1.0), a valid runtime_id,
// schema_version null or an integer, corpus_id and build_id null. Extra keys are allowed.
func ValidIdentity(x any) bool {
	m, ok := x.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range [...]string{"contract_version", "runtime_id", "schema_version", "corpus_id", "build_id"} {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	if n, ok := jsonInt(m["contract_version"]); !ok || n != 1 {
		return false
	}
	if rid, ok := m["runtime_id"].(string); !ok || !ValidRuntimeID(rid) {
		return false
	}
	if sv := m["schema_version"]; sv != nil {
		if _, ok := jsonInt(sv); !ok {
			return false
		}
	}
	return m["corpus_id"] == nil && m["build_id"] == nil
}

// jsonInt accepts the integer forms a decoded body can hold: json.Number written as an
// integer, or a Go integer / integral float64 (bodies built by hand in tests).
func jsonInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// CheckIdentity checks a success body against an expected runtime id (reference §7.3): a
// missing or malformed identity → identity_unavailable; a different runtime id →
// instance_mismatch with {expected_runtime_id, actual_runtime_id}. nil means it matches. The
// body's content is never copied into the error.
func CheckIdentity(body any, expected string) *ToolError {
	m, _ := body.(map[string]any)
	id, _ := m["identity"].(map[string]any)
	if m == nil || !ValidIdentity(id) {
		return NewError(CodeIdentityUnavailable, MsgIdentityMissing, nil)
	}
	if actual := id["runtime_id"].(string); actual != expected {
		return NewError(CodeInstanceMismatch, MsgInstanceMismatch, map[string]any{
			"expected_runtime_id": expected,
			"actual_runtime_id":   actual,
		})
	}
	return nil
}

// MsgWrongShape is the sentence for a success reply that is not what the tool reads.
func MsgWrongShape(what, got string) string {
	return "resmon answered, but not with " + what + " (it sent " + got + "), so there is no answer to give from it."
}

// jsonNullReply is a success body that was the JSON literal null, kept apart from an empty
// body (nil): an empty export is an empty file, while null is no answer at all, and an
// export tool answering "" for it would invent an empty file.
type jsonNullReply struct{}

// MarshalJSON keeps it null wherever it is encoded.
func (jsonNullReply) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// JSONNull is what the client decodes a null body to.
var JSONNull any = jsonNullReply{}
