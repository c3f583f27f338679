package backend_test

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// The client's connections: transport failures, a refused token, and the pool.

// uvicorn closes a keep-alive connection after 5 s idle. A POST sent on a pooled connection at
// the moment the server closes it fails with EOF and cannot be retried safely, so the client must
// drop idle connections first.
func TestClientDropsIdleConnectionsBeforeUvicornDoes(t *testing.T) {
	const uvicornKeepAlive = 5 * time.Second
	c := backend.NewClient(&discovery.Backend{BaseURL: "http://127.0.0.1:1", Port: 1}, nil)
	defer c.Close()
	tr, ok := backend.HTTPClientOf(c).Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", backend.HTTPClientOf(c).Transport)
	}
	if tr.IdleConnTimeout <= 0 || tr.IdleConnTimeout >= uvicornKeepAlive {
		t.Fatalf("IdleConnTimeout = %v, want in (0, %v)", tr.IdleConnTimeout, uvicornKeepAlive)
	}
}

func TestClientTransportErrors(t *testing.T) {
	ctx := backendtest.Context(t)

	t.Run("refused connection is not sent", func(t *testing.T) {
		port := coreDeadPort(t)
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		c := backend.NewClient(&discovery.Backend{BaseURL: base, Port: port, Token: discovery.Token(testkit.NewToken(t))}, nil)
		defer c.Close()
		_, err := c.Call(ctx, &backend.Request{Method: "POST", Path: "/api/routines", Body: map[string]any{}, Write: true})
		te := coreToolErr(t, err)
		if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgNotSent || !te.BackendGone || te.Sent {
			t.Fatalf("%+v", te)
		}
		if !reflect.DeepEqual(te.Detail, map[string]any{"tried": []string{base}, "reason": "ConnectError"}) {
			t.Fatalf("detail %v", te.Detail)
		}
	})

	t.Run("connection dropped mid-request may have been sent", func(t *testing.T) {
		f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		})
		c := backend.NewClient(f.Backend(), nil)
		defer c.Close()
		_, err := c.Call(ctx, &backend.Request{Method: "POST", Path: "/api/routines/4/activate", Write: true})
		te := coreToolErr(t, err)
		if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgTransport || !te.BackendGone || !te.Sent {
			t.Fatalf("%+v", te)
		}
		if r := te.Detail["reason"]; r != "RemoteProtocolError" && r != "ReadError" {
			t.Fatalf("reason %v", r)
		}
	})

	t.Run("request timeout", func(t *testing.T) {
		f := backendtest.NewHangingFake(t)
		c := backend.NewClient(f.Backend(), &backend.ClientOptions{RequestTimeout: 100 * time.Millisecond})
		defer c.Close()
		_, err := c.Call(ctx, &backend.Request{Path: "/api/executions"})
		te := coreToolErr(t, err)
		if te.Code != backend.CodeBackendUnavailable || !te.BackendGone || !te.Sent || te.Detail["reason"] != "ReadTimeout" {
			t.Fatalf("%+v", te)
		}
	})

	t.Run("caller cancellation is not the backend's fault", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-r.Context().Done()
		})
		c := backend.NewClient(f.Backend(), nil)
		defer c.Close()
		wantCancelledMidCall(t, c, ctx, entered, "/api/executions")
	})
}

// wantCancelledMidCall reads path through c, cancels the call once the backend has it
// (entered), and wants the caller's cancellation as the answer, not the backend's fault.
func wantCancelledMidCall(t *testing.T, c *backend.Client, ctx context.Context, entered <-chan struct{}, path string) {
	t.Helper()
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-entered:
		case <-ctx.Done():
		}
		cancel()
	}()
	_, err := c.Call(cctx, &backend.Request{Path: path})
	te := coreToolErr(t, err)
	if te.Message != backend.MsgCancelled || te.BackendGone {
		t.Fatalf("%+v", te)
	}
}

func TestClient401MeansBackendGone(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	b := f.Backend()
	b.Token = discovery.Token(testkit.NewToken(t)) // a stale token from an earlier run
	c := backend.NewClient(b, nil)
	defer c.Close()
	_, err := c.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgTokenRefused || !te.BackendGone || te.Sent {
		t.Fatalf("%+v", te)
	}
	if !reflect.DeepEqual(te.Detail, map[string]any{"tried": []string{f.Server.URL}}) {
		t.Fatalf("detail %v", te.Detail)
	}
}

func TestClientCloseDropsPooledConnections(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	c := backend.NewClient(f.Backend(), nil)
	ctx := backendtest.Context(t)
	for i := 0; i < 3; i++ {
		if _, err := c.Call(ctx, &backend.Request{Path: "/api/health"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.Conns.Load(); n != 1 {
		t.Fatalf("%d connections for 3 sequential calls; keep-alive not used", n)
	}
	c.Close()
	if _, err := c.Call(ctx, &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if n := f.Conns.Load(); n != 2 {
		t.Fatalf("after Close the pooled connection was reused (%d connections)", n)
	}
	// A closed client does not keep the connection it just used.
	if _, err := c.Call(ctx, &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if n := f.Conns.Load(); n != 3 {
		t.Fatalf("a closed client pooled a connection (%d connections)", n)
	}
}
