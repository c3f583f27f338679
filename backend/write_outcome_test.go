package backend_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
)

// What a failed write says about its outcome.

// A write whose answer did not come within the request timeout is not reported as a
// restart: it gets its own sentence naming the timeout, keeps backend_unavailable and
// detail.reason ReadTimeout, and is still never replayed. A connection that broke keeps
// MsgWriteInterrupted (TestUpstreamNeverReplaysWrite).
func TestTimedOutWriteSaysItTimedOut(t *testing.T) {
	f := backendtest.NewHangingFake(t)
	src := backendtest.NewSource()
	src.Set(f.Backend(), nil)
	const timeout = 150 * time.Millisecond
	u := backend.NewUpstream(src, &backend.UpstreamOptions{Client: &backend.ClientOptions{RequestTimeout: timeout}, RetryWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Method: "PUT", Path: "/api/settings/email", Write: true})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Detail["reason"] != backend.ReasonReadTimeout {
		t.Fatalf("%+v", te)
	}
	if te.Message == backend.MsgWriteInterrupted || strings.Contains(te.Message, "restarted") {
		t.Errorf("a timeout is reported as a restart: %q", te.Message)
	}
	if te.Message != backend.MsgWriteTimedOut(timeout) || !strings.Contains(te.Message, timeout.String()) {
		t.Errorf("message %q, want %q", te.Message, backend.MsgWriteTimedOut(timeout))
	}
	if f.Requests.Load() != 1 {
		t.Errorf("%d requests: the write was replayed", f.Requests.Load())
	}
}

// After the backend is killed (its sockets closed by the kernel, the pooled connection to it
// dead), the first write's connection is refused: nothing was sent, and the answer says so —
// "not sent", never "outcome unknown" or "stopped responding part-way". A write that was on the
// wire when the connection broke is the opposite case: outcome unknown, and never replayed.
func TestWriteSaysNotSentWhenNothingReachedTheBackend(t *testing.T) {
	var writes atomic.Int64
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writes.Add(1)
		}
		backendtest.WriteJSON(w, 200, map[string]any{"execution_id": 42})
	})
	src := backendtest.NewSource()
	src.Set(f.Backend(), nil)
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	ctx := backendtest.Context(t)
	// A read first, so the pool holds a connection to the instance that is about to die.
	if _, err := u.Call(ctx, &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	f.Server.Close() // the listener and every connection gone, as after kill -9

	for _, write := range []*backend.Request{
		{Method: http.MethodPost, Path: "/api/search/sweep", Body: map[string]any{"query": "q", "repositories": []string{"arxiv"}}, Write: true},
		{Method: http.MethodPut, Path: "/api/settings/ai", Body: map[string]any{"settings": map[string]any{}}, Write: true},
	} {
		_, err := u.Call(ctx, write)
		te := coreToolErr(t, err)
		if te.Code != backend.CodeBackendUnavailable || te.Sent || te.Message != backend.MsgNotSent || !strings.Contains(te.Message, "not sent") {
			t.Errorf("%s %s after the crash: %+v, want %q", write.Method, write.Path, te, backend.MsgNotSent)
		}
		if te.Message == backend.MsgWriteInterrupted || strings.Contains(te.Message, "part-way") {
			t.Errorf("%s: an unsent write is reported as possibly applied: %q", write.Path, te.Message)
		}
		if r := te.Detail["reason"]; r != "ConnectError" {
			t.Errorf("%s: reason %v, want ConnectError", write.Path, r)
		}
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d writes reached the backend", n)
	}
}

func TestWriteSaysOutcomeUnknownWhenItWasOnTheWire(t *testing.T) {
	var writes atomic.Int64
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1) // the whole request arrived; then the backend dies before answering
		coreDropper(w, r)
	})
	src := backendtest.NewSource()
	src.Set(f.Backend(), nil)
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Method: http.MethodPost, Path: "/api/routines/4/run", Write: true})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || !te.Sent || te.Message != backend.MsgWriteInterrupted {
		t.Fatalf("%+v, want %q", te, backend.MsgWriteInterrupted)
	}
	if writes.Load() != 1 {
		t.Fatalf("%d requests: the write was replayed", writes.Load())
	}
}
