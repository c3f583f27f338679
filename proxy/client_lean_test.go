package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// The lean read path against a raw HTTP server on loopback that answers however the test
// scripts it: well-formed, chunked, closing, garbage, oversized, torn or silent. Every
// outcome is what the Transport path gives (failure's classification), and a connection is
// reused only when its answer was whole.

// rawBackend accepts connections and, for each request read on one, calls answer with the
// request's line and headers and the connection (which answer may write to, close, or leave).
type rawBackend struct {
	ln      net.Listener
	token   string
	accepts atomic.Int64
	mu      sync.Mutex
	reqs    []string // each request's head, as read
	closed  chan struct{}
}

func newRawBackend(t *testing.T, answer func(n int, head string, c net.Conn) (keep bool)) *rawBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rb := &rawBackend{ln: ln, token: leanToken(t), closed: make(chan struct{}, 16)}
	var wg sync.WaitGroup
	var count atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			rb.accepts.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					_ = c.Close()
					select {
					case rb.closed <- struct{}{}:
					default:
					}
				}()
				br := bufio.NewReader(c)
				for {
					var head strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						head.WriteString(line)
						if line == "\r\n" {
							break
						}
					}
					rb.mu.Lock()
					rb.reqs = append(rb.reqs, head.String())
					rb.mu.Unlock()
					if !answer(int(count.Add(1)), head.String(), c) {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return rb
}

// leanTokenValue is the one token every raw backend of this file checks: each client
// registers its token with scrub, whose registry is bounded, and a new token per test would
// push the package's own (coreLeakToken) out of it under -count.
var (
	leanTokenOnce  sync.Once
	leanTokenValue string
)

func leanToken(t *testing.T) string {
	leanTokenOnce.Do(func() { leanTokenValue = testkit.NewToken(t) })
	return leanTokenValue
}

func (rb *rawBackend) client(t *testing.T, o *ClientOptions) *Client {
	port := rb.ln.Addr().(*net.TCPAddr).Port
	c := NewClient(&discovery.Backend{BaseURL: "http://127.0.0.1:" + strconv.Itoa(port), Port: port, Token: discovery.Token(rb.token)}, o)
	if c.lean == nil {
		t.Fatal("the lean path is off for a plain http base")
	}
	t.Cleanup(c.Close)
	return c
}

const okBody = `{"status":"ok","n":12345678901234567890}`

func writeOK(c net.Conn, extra string) {
	_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"+extra+"Content-Length: "+strconv.Itoa(len(okBody))+"\r\n\r\n"+okBody)
}

func wantOK(t *testing.T, v any, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	if m["status"] != "ok" || m["n"] == nil || m["n"].(interface{ String() string }).String() != "12345678901234567890" {
		t.Fatalf("answer %#v", v)
	}
}

func wantTransport(t *testing.T, err error, sent bool, reasons ...string) {
	t.Helper()
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || !te.BackendGone || te.Sent != sent {
		t.Fatalf("%+v", te)
	}
	for _, r := range reasons {
		if te.Detail["reason"] == r {
			return
		}
	}
	t.Fatalf("reason %v, want one of %v", te.Detail["reason"], reasons)
}

func TestLeanReadsSendWhatTheTransportSent(t *testing.T) {
	rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool { writeOK(c, ""); return true })
	c := rb.client(t, nil)
	v, err := c.Call(coreCtx(t), &Request{Path: "/api/routines", Query: map[string][]string{"q": {"a b&c"}, "limit": {"5"}}})
	wantOK(t, v, err)
	rb.mu.Lock()
	head := rb.reqs[0]
	rb.mu.Unlock()
	port := strconv.Itoa(rb.ln.Addr().(*net.TCPAddr).Port)
	want := "GET /api/routines?limit=5&q=a+b%26c HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUser-Agent: Go-http-client/1.1\r\n" +
		"Accept: application/json\r\nAuthorization: Bearer " + rb.token + "\r\n\r\n"
	if head != want {
		t.Fatalf("request\n%q\nwant\n%q", head, want)
	}
	if strings.Contains(strings.ToLower(head), "origin:") {
		t.Fatal("an Origin header was sent")
	}
	// A path that needs escaping is escaped as net/http escapes it.
	for _, path := range []string{"/api/profiles/a b/é", "//api/x", "/api/a%2Fb"} {
		if _, err := c.Call(coreCtx(t), &Request{Path: path}); err != nil {
			t.Fatal(err)
		}
		rb.mu.Lock()
		head = rb.reqs[len(rb.reqs)-1]
		rb.mu.Unlock()
		u, _ := url.Parse(c.base + path)
		if want := "GET " + u.RequestURI() + " HTTP/1.1\r\n"; !strings.HasPrefix(head, want) {
			t.Fatalf("path %q: request line %q, want %q", path, head, want)
		}
	}
}

// wantHealthCalls makes calls successful health reads through c and wants them to have
// taken conns connections of rb's.
func wantHealthCalls(t *testing.T, rb *rawBackend, c *Client, calls, conns int) {
	t.Helper()
	for range calls {
		v, err := c.Call(coreCtx(t), &Request{Path: "/api/health"})
		wantOK(t, v, err)
	}
	if n := rb.accepts.Load(); n != int64(conns) {
		t.Fatalf("%d connections for %d calls, want %d", n, calls, conns)
	}
}

func TestLeanReadsReuseAWholeAnswersConnection(t *testing.T) {
	t.Run("content-length", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool { writeOK(c, ""); return true })
		c := rb.client(t, nil)
		wantHealthCalls(t, rb, c, 3, 1)
	})
	t.Run("chunked", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
			half := len(okBody) / 2
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(half), 16)+"\r\n"+okBody[:half]+"\r\n"+
				strconv.FormatInt(int64(len(okBody)-half), 16)+"\r\n"+okBody[half:]+"\r\n0\r\n\r\n")
			return true
		})
		c := rb.client(t, nil)
		wantHealthCalls(t, rb, c, 3, 1)
	})
	t.Run("an informational answer first", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
			_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
			writeOK(c, "")
			return true
		})
		v, err := rb.client(t, nil).Call(coreCtx(t), &Request{Path: "/api/health"})
		wantOK(t, v, err)
	})
	t.Run("an error answer's body is drained", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
			body := `{"detail":"No such routine."}`
			_, _ = io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			return true
		})
		c := rb.client(t, nil)
		for range 2 {
			_, err := c.Call(coreCtx(t), &Request{Path: "/api/routines/9"})
			te := coreToolErr(t, err)
			if te.Code != CodeNotFound || te.Message != "No such routine." {
				t.Fatalf("%+v", te)
			}
		}
		if n := rb.accepts.Load(); n != 1 {
			t.Fatalf("%d connections for 2 error answers", n)
		}
	})
}

func TestLeanReadsDoNotReuseAClosingConnection(t *testing.T) {
	t.Run("connection close", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool { writeOK(c, "Connection: close\r\n"); return false })
		c := rb.client(t, &ClientOptions{WarmFor: -1})
		wantHealthCalls(t, rb, c, 2, 2)
	})
	t.Run("body until close", func(t *testing.T) {
		rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"+okBody)
			return false
		})
		c := rb.client(t, &ClientOptions{WarmFor: -1})
		wantHealthCalls(t, rb, c, 2, 2)
	})
}

// A pooled connection the backend closed after answering: the next read is sent again, once,
// on a new connection, and succeeds.
func TestLeanReadsRetryAStaleConnectionOnce(t *testing.T) {
	rb, c, ctx := staleAfterOneRead(t)
	if c.pool.idleCount() != 1 {
		t.Fatal("the connection was not pooled")
	}
	v, err := c.Call(ctx, &Request{Path: "/api/health"})
	wantOK(t, v, err)
	if n := rb.accepts.Load(); n != 2 {
		t.Fatalf("%d connections; want the stale one and one new", n)
	}
}

func TestLeanReadsFailLikeTheTransport(t *testing.T) {
	ctx := coreCtx(t)
	big := strings.Repeat("x", 2<<20)
	cases := []struct {
		name    string
		answer  func(c net.Conn)
		sent    bool
		reasons []string
	}{
		{"garbage status line", func(c net.Conn) { _, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n") }, true, []string{"ReadError"}},
		{"oversized headers", func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+big+"\r\n\r\n")
		}, true, []string{"ReadError"}},
		{"closed before answering", func(c net.Conn) {}, true, []string{"RemoteProtocolError"}},
		{"closed mid-body", func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"status\":")
		}, true, []string{"RemoteProtocolError"}},
		{"closed mid-chunk", func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{\"status\":")
		}, true, []string{"RemoteProtocolError"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool { tc.answer(c); return false })
			_, err := rb.client(t, nil).Call(ctx, &Request{Path: "/api/health"})
			wantTransport(t, err, tc.sent, tc.reasons...)
		})
	}
	t.Run("refused connection is not sent", func(t *testing.T) {
		port := coreDeadPort(t)
		c := NewClient(&discovery.Backend{BaseURL: "http://127.0.0.1:" + strconv.Itoa(port), Port: port, Token: discovery.Token(testkit.NewToken(t))}, nil)
		defer c.Close()
		_, err := c.Call(ctx, &Request{Path: "/api/health"})
		wantTransport(t, err, false, "ConnectError")
	})
}

func TestLeanReadsRefuseAnswersOverTheBound(t *testing.T) {
	const limit = 4 << 20
	body := `"` + strings.Repeat("a", limit) + `"`
	for _, announced := range []bool{true, false} {
		t.Run("announced "+strconv.FormatBool(announced), func(t *testing.T) {
			rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
				if announced {
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n")
				} else {
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(int64(len(body)), 16)+"\r\n")
				}
				_, _ = io.WriteString(c, body)
				return false
			})
			c := rb.client(t, nil)
			_, err := c.Call(coreCtx(t), &Request{Path: "/api/health"})
			te := coreToolErr(t, err)
			if te.Code != CodeUpstreamError || te.Message != MsgTooLarge(limit) {
				t.Fatalf("%+v", te)
			}
			if c.pool.idleCount() != 0 {
				t.Fatal("the connection of a refused answer was pooled")
			}
		})
	}
}

func TestLeanReadsTimeOutOnTheConnectionsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
	}{
		{"no answer", func(net.Conn) {}},
		{"headers then nothing", func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
				tc.answer(c)
				<-release
				return false
			})
			defer close(release)
			c := rb.client(t, &ClientOptions{RequestTimeout: 100 * time.Millisecond})
			_, err := c.Call(coreCtx(t), &Request{Path: "/api/health"})
			wantTransport(t, err, true, reasonReadTimeout)
			if c.pool.idleCount() != 0 {
				t.Fatal("a timed-out connection was pooled")
			}
		})
	}
}

func TestLeanReadsStopWhenTheCallerCancels(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool {
		entered <- struct{}{}
		<-release
		return false
	})
	defer close(release)
	wantCancelledMidCall(t, rb.client(t, nil), coreCtx(t), entered, "/api/health")
}

// The pool itself: bounded, waiters served as connections come back, a wait bounded by its
// context, idle connections handed out before a new one is dialed.
func TestLeanPoolBoundsItsConnections(t *testing.T) {
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		a, b := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, b) }()
		return a, nil
	}
	p := newLeanPool(dial, "127.0.0.1:1", 1)
	ctx := coreCtx(t)
	lc, err := p.get(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	expired, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.get(expired, false); !errors.Is(err, errPoolWait) {
		t.Fatalf("a full pool gave %v to a call that cannot wait", err)
	}
	got := make(chan *leanConn)
	go func() {
		w, err := p.get(ctx, false)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	coreEventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.wait) == 1 })
	p.put(lc, true)
	if w := <-got; w != lc {
		t.Fatal("the waiter did not get the returned connection")
	}
	p.put(lc, true)
	if again, _ := p.get(ctx, false); again != lc || dials.Load() != 1 {
		t.Fatalf("dials %d: an idle connection was not reused", dials.Load())
	}
	p.put(lc, false) // closed: the slot is free again
	if _, err := p.get(ctx, false); err != nil || dials.Load() != 2 {
		t.Fatalf("after a closed connection: %v, %d dials", err, dials.Load())
	}
}

// A base the lean path cannot serve leaves reads on net/http.
func TestLeanPathIsOffForOtherBases(t *testing.T) {
	for _, base := range []string{"https://127.0.0.1:1", "http://u:p@127.0.0.1:1", "http://127.0.0.1:1?x=1"} {
		if newLeanTarget(base) != nil {
			t.Errorf("%s: lean path on", base)
		}
	}
	if lt := newLeanTarget("http://127.0.0.1"); lt == nil || lt.addr != "127.0.0.1:80" {
		t.Errorf("default port: %+v", lt)
	}
}

// The stale connection's retry fails too (the backend is gone): the error is classified as
// the retry's (a refused connection: not sent), not the stale connection's.
func TestLeanReadsReportTheRetrysFailure(t *testing.T) {
	rb, c, ctx := staleAfterOneRead(t)
	_ = rb.ln.Close() // nothing listens any more
	_, err := c.Call(ctx, &Request{Path: "/api/health"})
	wantTransport(t, err, false, "ConnectError")
}

// staleAfterOneRead is a client whose one pooled connection the backend has closed after
// answering a read: the next read meets a stale connection.
func staleAfterOneRead(t *testing.T) (*rawBackend, *Client, context.Context) {
	t.Helper()
	rb := newRawBackend(t, func(_ int, _ string, c net.Conn) bool { writeOK(c, ""); return false })
	c := rb.client(t, &ClientOptions{WarmFor: -1})
	ctx := coreCtx(t)
	v, err := c.Call(ctx, &Request{Path: "/api/health"})
	wantOK(t, v, err)
	select {
	case <-rb.closed: // the backend closed the pooled connection
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return rb, c, ctx
}
