package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/internal/sockio"
)

// The lean read path. net/http's Transport hands every request to a connection's writeLoop
// goroutine and every answer back from its readLoop goroutine, which then waits in one more
// read for the next answer; with a context timer and a client trace on top, that was the
// largest part of a call's CPU in the daemon after the SDK's dispatch. Reads (GETs, nearly
// every call) are therefore written and read on the calling goroutine, over this pool of
// keep-alive connections; writes stay on net/http (writeClient), each on a connection of its
// own. The pool keeps what the Transport gave the reads: the same verified dialer (and the
// warm spare behind it), the same bound on connections, idle connections dropped before
// uvicorn drops them, and the answer parsed by net/http's own response reader.

// idleConnTimeout is how long a pooled connection may sit unused: below uvicorn's 5 s
// keep-alive timeout, so we drop an idle connection before the backend does (see NewClient).
const idleConnTimeout = 4 * time.Second

// maxResponseHeaderBytes bounds an answer's status line and headers (resmon's are a few
// hundred bytes); past it the answer is a failed read, not a memory hog.
const maxResponseHeaderBytes = 1 << 20

// max1xxResponses bounds the informational answers skipped before the real one, as the
// Transport does.
const max1xxResponses = 5

var errHeadersTooLarge = errors.New("resmon's response headers exceed " + strconv.Itoa(maxResponseHeaderBytes) + " bytes")

// leanTarget is what the lean path needs of the base URL; nil (net/http serves reads too)
// when the base is not a plain http://host:port[/path] URL.
type leanTarget struct {
	host   string // the Host header
	addr   string // what is dialed: host:port
	prefix string // the base's path, before each request's
}

func newLeanTarget(base string) *leanTarget {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return &leanTarget{host: u.Host, addr: net.JoinHostPort(u.Hostname(), port), prefix: u.EscapedPath()}
}

// leanConn is one pooled connection: its reader (bounded while headers are read) and the
// buffer its requests are written from.
type leanConn struct {
	nc     net.Conn
	rw     io.ReadWriter // nc's bytes: through sockio where it can (see sockio's doc)
	lr     limitedReader
	br     *bufio.Reader
	wbuf   []byte
	reused bool      // it has carried a request before
	idleAt time.Time // when it was last put back
}

// limitedReader is the connection as the response reader sees it: it counts what the
// current request read (a stale connection fails before its first byte) and refuses more
// than limit bytes (the header bound; lifted for the body, which readBody bounds).
type limitedReader struct {
	r     io.Reader
	limit int64
	read  int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.limit <= 0 {
		return 0, errHeadersTooLarge
	}
	if int64(len(p)) > l.limit {
		p = p[:l.limit]
	}
	n, err := l.r.Read(p)
	l.limit -= int64(n)
	l.read += int64(n)
	return n, err
}

// leanPool holds one generation's read connections: at most max open (idle, in use or being
// dialed), the most recently used handed out first, waiters served in order.
type leanPool struct {
	dial   dialFunc
	addr   string
	max    int
	mu     sync.Mutex
	idle   []*leanConn
	open   int
	wait   []chan *leanConn // FIFO; a nil sent means "a slot is yours: dial"
	closed bool
	sweep  *time.Timer // drops connections idle past idleConnTimeout
}

func newLeanPool(dial dialFunc, addr string, max int) *leanPool {
	return &leanPool{dial: dial, addr: addr, max: max}
}

// errPoolWait is the error of a call that gave up waiting for a connection.
var errPoolWait = errors.New("waiting for a connection")

// takeIdle returns the most recently used idle connection, or nil.
func (p *leanPool) takeIdle() *leanConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeIdleLocked()
}

func (p *leanPool) takeIdleLocked() *leanConn {
	for len(p.idle) > 0 {
		lc := p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(lc.idleAt) < idleConnTimeout {
			return lc
		}
		p.open--
		_ = lc.nc.Close()
	}
	return nil
}

// get returns an idle connection, or a new one dialed within dctx (which bounds the wait for
// a free slot too). fresh skips the idle ones (the retry after a stale connection).
func (p *leanPool) get(dctx context.Context, fresh bool) (*leanConn, error) {
	p.mu.Lock()
	if !fresh {
		if lc := p.takeIdleLocked(); lc != nil {
			p.mu.Unlock()
			return lc, nil
		}
	}
	if p.open < p.max {
		p.open++
		p.mu.Unlock()
		return p.dialSlot(dctx)
	}
	ch := make(chan *leanConn, 1)
	p.wait = append(p.wait, ch)
	p.mu.Unlock()
	select {
	case lc := <-ch:
		if lc != nil {
			return lc, nil
		}
		return p.dialSlot(dctx)
	case <-dctx.Done():
	}
	p.mu.Lock()
	for i, w := range p.wait {
		if w == ch {
			p.wait = append(p.wait[:i], p.wait[i+1:]...)
			p.mu.Unlock()
			return nil, errPoolWait
		}
	}
	p.mu.Unlock()
	// Handed a connection or a slot as we gave up: pass it on.
	if lc := <-ch; lc != nil {
		p.put(lc, true)
	} else {
		p.release()
	}
	return nil, errPoolWait
}

// dialSlot dials a connection for a slot already counted in open.
func (p *leanPool) dialSlot(dctx context.Context) (*leanConn, error) {
	nc, err := p.dial(dctx, "tcp", p.addr)
	if err != nil {
		p.release()
		return nil, err
	}
	rw := sockio.ReadWriter(nc)
	lc := &leanConn{nc: nc, rw: rw, lr: limitedReader{r: rw}}
	lc.br = bufio.NewReaderSize(&lc.lr, 4<<10)
	return lc, nil
}

// nextWaiter takes the longest waiting request off the queue (nil when none); p.mu is held.
func (p *leanPool) nextWaiter() chan *leanConn {
	if len(p.wait) == 0 {
		return nil
	}
	ch := p.wait[0]
	p.wait = p.wait[1:]
	return ch
}

// release gives up a slot (its connection closed or never dialed): a waiter may dial.
func (p *leanPool) release() {
	p.mu.Lock()
	if ch := p.nextWaiter(); ch != nil {
		p.mu.Unlock()
		ch <- nil
		return
	}
	p.open--
	p.mu.Unlock()
}

// put returns a connection after a request: to the next waiter or the idle list when it can
// carry another one, closed (its slot released) otherwise.
func (p *leanPool) put(lc *leanConn, reusable bool) {
	if !reusable {
		_ = lc.nc.Close()
		p.release()
		return
	}
	lc.reused = true
	p.mu.Lock()
	if ch := p.nextWaiter(); ch != nil {
		p.mu.Unlock()
		ch <- lc
		return
	}
	if p.closed {
		p.open--
		p.mu.Unlock()
		_ = lc.nc.Close()
		return
	}
	lc.idleAt = time.Now()
	p.idle = append(p.idle, lc)
	if p.sweep == nil {
		p.sweep = time.AfterFunc(idleConnTimeout, p.dropIdle)
	}
	p.mu.Unlock()
}

// dropIdle closes the connections idle for idleConnTimeout, and comes back for the rest.
func (p *leanPool) dropIdle() {
	p.mu.Lock()
	var old []*leanConn
	keep := p.idle[:0]
	for _, lc := range p.idle {
		if time.Since(lc.idleAt) >= idleConnTimeout {
			old = append(old, lc)
		} else {
			keep = append(keep, lc)
		}
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	p.open -= len(old)
	if len(keep) > 0 && !p.closed {
		p.sweep.Reset(idleConnTimeout - time.Since(keep[0].idleAt))
	} else {
		p.sweep = nil
	}
	p.mu.Unlock()
	for _, lc := range old {
		_ = lc.nc.Close()
	}
}

// closeIdle closes every idle connection; with forGood, those in use are closed as they
// come back.
func (p *leanPool) closeIdle(forGood bool) {
	p.mu.Lock()
	old := p.idle
	p.idle = nil
	p.open -= len(old)
	if forGood {
		p.closed = true
	}
	p.mu.Unlock()
	for _, lc := range old {
		_ = lc.nc.Close()
	}
}

// idleCount is how many connections wait in the pool (tests).
func (p *leanPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// leanAnswer is what a read brought back.
type leanAnswer struct {
	status      int
	header      http.Header
	contentType string
	body        []byte
	n           int64 // bytes of body read (limit+1 when over the bound)
}

// leanGet performs the GET r on a pooled connection. Its errors are already classified
// (*ToolError) the way failure classifies the Transport's.
func (c *Client) leanGet(ctx context.Context, r *Request) (*leanAnswer, error) {
	target, query := c.lean.prefix+r.Path, ""
	if len(r.Query) > 0 {
		query = "?" + r.Query.Encode()
	}
	// What the Transport would send: the path as the URL parser leaves it (the same bytes
	// when the path needs no escaping, the usual case, so no parse is paid for it).
	uri := target + query
	if !plainPath(target) {
		u, err := url.Parse(c.base + r.Path + query)
		if err != nil {
			return nil, NewError(CodeInternalError, "The resmon MCP server built an invalid request.", map[string]any{"reason": "InvalidURL"})
		}
		uri = u.RequestURI()
	}
	deadline := time.Now().Add(c.opts.RequestTimeout)
	for attempt := 0; ; attempt++ {
		ans, stale, err := c.leanAttempt(ctx, uri, deadline, attempt > 0)
		if stale && attempt == 0 && ctx.Err() == nil && time.Now().Before(deadline) {
			// A pooled connection the backend had closed: nothing reached it, so a read is
			// sent once more on a new connection (the Transport does the same).
			continue
		}
		return ans, err
	}
}

// leanAttempt is one try of leanGet. stale says the try failed on a reused connection
// before any byte of an answer came, which is how a connection the backend closed fails.
func (c *Client) leanAttempt(ctx context.Context, uri string, deadline time.Time, fresh bool) (ans *leanAnswer, stale bool, err error) {
	var st sendState
	fail := func(err error, timedOut bool) (*leanAnswer, bool, error) {
		rctx := context.Background()
		if timedOut {
			tctx, cancel := context.WithCancelCause(context.Background())
			cancel(errRequestTimeout)
			rctx = tctx
		}
		return nil, false, c.failure(ctx, rctx, err, st)
	}
	// staleFail is fail for a reused connection that failed before any byte of an answer.
	staleFail := func(err error) (*leanAnswer, bool, error) {
		ans, _, ferr := fail(err, isTimeout(err))
		return ans, true, ferr
	}

	lc, timedOut, err := c.getConn(ctx, deadline, fresh)
	if err != nil {
		return fail(err, timedOut)
	}
	st.connected = true
	reusable := false
	defer func() { c.pool.put(lc, reusable) }()

	// The request timeout is the connection's deadline; cancellation moves it to the past,
	// which unblocks the read or write at once.
	_ = lc.nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = lc.nc.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			reusable = false // its deadline was moved; and the caller is gone anyway
		}
	}()

	lc.wbuf = c.appendGet(lc.wbuf[:0], uri)
	if _, werr := lc.rw.Write(lc.wbuf); werr != nil {
		if lc.reused && ctx.Err() == nil && isConnGone(werr) {
			return staleFail(werr)
		}
		return fail(werr, isTimeout(werr))
	}
	if cap(lc.wbuf) > 4<<10 {
		lc.wbuf = nil
	}
	st.written = true

	lc.lr.read, lc.lr.limit = 0, maxResponseHeaderBytes
	if _, perr := lc.br.Peek(1); perr != nil {
		// As http.ReadResponse reports a failure before the status line's first byte.
		if perr == io.EOF {
			perr = io.ErrUnexpectedEOF
		}
		if lc.reused && lc.lr.read == 0 && ctx.Err() == nil && isConnGone(perr) {
			return staleFail(perr)
		}
		return fail(perr, isTimeout(perr))
	}
	// The usual answer's head, whole in the buffer, is read here (client_lean_head.go);
	// any other is left there for http.ReadResponse.
	buffered, _ := lc.br.Peek(lc.br.Buffered())
	if end := bytes.Index(buffered, []byte("\r\n\r\n")); end >= 0 {
		if h, ok := plainAnswerHead(buffered[:end+4]); ok {
			_, _ = lc.br.Discard(end + 4)
			lc.lr.limit = math.MaxInt64
			return c.leanPlainBody(lc, h, &reusable, fail)
		}
	}
	var resp *http.Response
	for i := 0; ; i++ {
		resp, err = http.ReadResponse(lc.br, nil)
		if err != nil {
			if lc.reused && lc.lr.read == 0 && ctx.Err() == nil && isConnGone(err) {
				return staleFail(err)
			}
			return fail(err, isTimeout(err))
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if i == max1xxResponses {
			return fail(errors.New("too many 1xx informational responses"), false)
		}
	}
	lc.lr.limit = math.MaxInt64
	ans = &leanAnswer{status: resp.StatusCode, header: resp.Header, contentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode < 200 || resp.StatusCode == http.StatusSwitchingProtocols {
		return ans, false, nil // MapStatus calls it unexpected; the connection is not reused
	}

	if resp.StatusCode >= 300 {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
		whole := rerr == nil && len(body) <= maxErrorBody
		if len(body) > maxErrorBody {
			body = body[:maxErrorBody]
		}
		if rerr != nil && len(body) == 0 {
			body = nil // the status alone decides the code; a torn body only loses the detail
		}
		ans.body = body
		reusable = whole && !resp.Close
		return ans, false, nil
	}

	limit := c.opts.MaxResponseBytes
	if resp.ContentLength > limit {
		ans.n = limit + 1 // refused before a byte of it is read; the connection is closed
		return ans, false, nil
	}
	body, n, rerr := readBody(resp.Body, resp.ContentLength, limit)
	ans.n = n
	if rerr != nil {
		return fail(rerr, isTimeout(rerr))
	}
	ans.body = body
	reusable = n <= limit && !resp.Close
	return ans, false, nil
}

// leanPlainBody reads the body of an answer whose head plainAnswerHead read, as the
// general path reads one of announced length: refused unread past the bound, and
// io.ErrUnexpectedEOF for one cut short, as net/http's body reader says.
func (c *Client) leanPlainBody(lc *leanConn, h plainHead, reusable *bool, fail func(error, bool) (*leanAnswer, bool, error)) (*leanAnswer, bool, error) {
	ans := &leanAnswer{status: h.status, contentType: h.contentType}
	if limit := c.opts.MaxResponseBytes; h.length > limit {
		ans.n = limit + 1 // refused before a byte of it is read; the connection is closed
		return ans, false, nil
	}
	body := make([]byte, h.length)
	n, err := io.ReadFull(lc.br, body)
	ans.n = int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fail(err, isTimeout(err))
	}
	ans.body = body
	*reusable = true
	return ans, false, nil
}

// getConn takes a connection within the request's deadline; timedOut says the wait or the
// dial ran out of the request's time. An idle connection is taken without a timer: only a
// call that must wait or dial gets a context bounded by the deadline.
func (c *Client) getConn(ctx context.Context, deadline time.Time, fresh bool) (lc *leanConn, timedOut bool, err error) {
	if !fresh {
		if lc := c.pool.takeIdle(); lc != nil {
			return lc, false, nil
		}
	}
	dctx, cancel := context.WithDeadlineCause(ctx, deadline, errRequestTimeout)
	defer cancel()
	lc, err = c.pool.get(dctx, fresh)
	return lc, err != nil && errors.Is(context.Cause(dctx), errRequestTimeout), err
}

// appendGet writes the request as net/http writes it for this client: the request line,
// Host, User-Agent, then the headers newRequest sets, in the Transport's (sorted) order.
func (c *Client) appendGet(b []byte, uri string) []byte {
	b = append(b, "GET "...)
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.lean.host...)
	b = append(b, "\r\nUser-Agent: Go-http-client/1.1\r\nAccept: application/json\r\nAuthorization: "...)
	b = append(b, c.auth...)
	return append(b, "\r\n\r\n"...)
}

// plainPath reports whether p is a path url.Parse leaves as it is: "/"-rooted (or empty),
// of unreserved characters and "/" only.
func plainPath(p string) bool {
	if p != "" && p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch ch := p[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case ch == '/', ch == '-', ch == '_', ch == '.', ch == '~':
		default:
			return false
		}
	}
	return true
}

// isConnGone reports an error of a connection the peer closed or reset.
func isConnGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
