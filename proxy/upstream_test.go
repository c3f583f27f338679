package proxy

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// patient options: any wait the code is not supposed to make would hit the test's context
// instead and fail the assertion on the result, so no timing is asserted.
var corePatient = &UpstreamOptions{FirstCheckWait: time.Hour, RetryWait: time.Hour}

// coreDropper answers every request by dropping the connection, like a backend killed
// mid-request.
func coreDropper(w http.ResponseWriter, r *http.Request) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

func TestUpstreamUnavailableFailsAtOnce(t *testing.T) {
	src := newCoreSource()
	un := &discovery.Unavailable{Reason: discovery.ReasonNotRunning, Message: "resmon is not running. Start the resmon app and try again.",
		Tried: []string{"http://127.0.0.1:8742"}}
	src.set(nil, un)
	u := NewUpstream(src, corePatient)
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message != un.Message || !reflect.DeepEqual(te.Detail, un.Detail()) {
		t.Fatalf("%+v", te)
	}
	if src.rechecks.Load() != 0 {
		t.Fatal("an unavailable state triggered a recheck")
	}
}

func TestUpstreamWaitsForFirstCheck(t *testing.T) {
	f := newCoreFake(t, nil)
	src := newCoreSource()
	u := NewUpstream(src, corePatient)
	defer u.Close()
	done := make(chan error, 1)
	go func() {
		_, err := u.Call(coreCtx(t), &Request{Path: "/api/health"})
		done <- err
	}()
	src.set(f.backend(), nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f.requests.Load() != 1 {
		t.Fatalf("%d requests", f.requests.Load())
	}
}

func TestUpstreamFirstCheckWithoutGenerationBump(t *testing.T) {
	// A source whose first check fills the state but leaves the generation at 0 is still seen.
	f := newCoreFake(t, nil)
	src := newCoreSource()
	u := NewUpstream(src, corePatient)
	defer u.Close()
	done := make(chan error, 1)
	go func() {
		_, err := u.Call(coreCtx(t), &Request{Path: "/api/health"})
		done <- err
	}()
	src.mu.Lock()
	src.st = discovery.State{Backend: f.backend()}
	src.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestUpstreamFirstCheckWaitIsBounded(t *testing.T) {
	src := newCoreSource()
	u := NewUpstream(src, &UpstreamOptions{FirstCheckWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message == MsgCancelled {
		t.Fatalf("%+v", te)
	}
}

func TestUpstreamSwapsClientPerGeneration(t *testing.T) {
	a := newCoreFake(t, nil)
	b := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(a.backend(), nil)
	u := NewUpstream(src, corePatient)
	defer u.Close()
	ctx := coreCtx(t)
	for i := 0; i < 2; i++ {
		if _, err := u.Call(ctx, &Request{Path: "/api/health"}); err != nil {
			t.Fatal(err)
		}
	}
	if a.conns.Load() != 1 {
		t.Fatalf("same generation used %d connections", a.conns.Load())
	}
	gen := src.set(b.backend(), nil)
	info := &CallInfo{}
	if _, err := u.Call(WithCallInfo(ctx, info), &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if b.requests.Load() != 1 || a.requests.Load() != 2 {
		t.Fatalf("a=%d b=%d requests", a.requests.Load(), b.requests.Load())
	}
	want := CallInfo{Generation: gen, RuntimeID: b.runtimeID, BaseURL: b.srv.URL, Requests: 1}
	if *info != want {
		t.Fatalf("info %+v, want %+v", *info, want)
	}
	// The old generation's keep-alive connection is closed, not left for reuse.
	coreEventually(t, func() bool { return a.closed.Load() == 1 })

	// Going down drops the client too.
	src.set(nil, &discovery.Unavailable{Message: "down", Tried: []string{b.srv.URL}})
	if _, err := u.Call(ctx, &Request{Path: "/api/health"}); err == nil {
		t.Fatal("call succeeded while unavailable")
	}
	coreEventually(t, func() bool { return b.closed.Load() == 1 })
}

func TestUpstreamRetriesReadOnceAcrossRestart(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	b := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		coreWriteJSON(w, 200, map[string]any{"executions": []any{}})
	})
	src := newCoreSource()
	src.set(a.backend(), nil)
	src.onRecheck = func() {
		// The watcher first sees the app down, then the new instance.
		src.set(nil, &discovery.Unavailable{Message: "down"})
		go src.set(b.backend(), nil)
	}
	u := NewUpstream(src, corePatient)
	defer u.Close()
	info := &CallInfo{}
	v, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Path: "/api/executions"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["executions"]; !ok {
		t.Fatalf("%v", v)
	}
	if a.requests.Load() != 1 || b.requests.Load() != 1 || src.rechecks.Load() != 1 {
		t.Fatalf("a=%d b=%d rechecks=%d", a.requests.Load(), b.requests.Load(), src.rechecks.Load())
	}
	if !info.Retried || info.Requests != 2 || info.Generation != 3 || info.BaseURL != b.srv.URL || info.RuntimeID != b.runtimeID {
		t.Fatalf("info %+v", *info)
	}
}

func TestUpstreamRetriesReadAfterTokenRotation(t *testing.T) {
	f := newCoreFake(t, nil)
	stale := f.backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	src := newCoreSource()
	src.set(stale, nil)
	src.onRecheck = func() { src.set(f.backend(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	if _, err := u.Call(coreCtx(t), &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if f.requests.Load() != 2 {
		t.Fatalf("%d requests", f.requests.Load())
	}
}

func TestUpstreamReadGivesUpWithoutNewGeneration(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	src := newCoreSource()
	src.set(a.backend(), nil)
	u := NewUpstream(src, &UpstreamOptions{RetryWait: 20 * time.Millisecond})
	defer u.Close()
	info := &CallInfo{}
	_, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Path: "/api/executions"})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message != MsgTransport || a.requests.Load() != 1 || src.rechecks.Load() != 1 || info.Retried {
		t.Fatalf("%+v requests=%d rechecks=%d info=%+v", te, a.requests.Load(), src.rechecks.Load(), *info)
	}
}

func TestUpstreamNeverReplaysWrite(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	b := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(a.backend(), nil)
	src.onRecheck = func() { src.set(b.backend(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	info := &CallInfo{}
	_, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Method: "POST", Path: "/api/routines/4/run", Write: true})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message != MsgWriteInterrupted {
		t.Fatalf("%+v", te)
	}
	if !reflect.DeepEqual(te.Detail["tried"], []string{a.srv.URL}) {
		t.Fatalf("detail %v", te.Detail)
	}
	if a.requests.Load() != 1 || b.requests.Load() != 0 || src.rechecks.Load() != 1 || info.Retried || info.Requests != 1 {
		t.Fatalf("a=%d b=%d rechecks=%d info=%+v", a.requests.Load(), b.requests.Load(), src.rechecks.Load(), *info)
	}
	// The next call goes to the new generation.
	if _, err := u.Call(coreCtx(t), &Request{Path: "/api/health"}); err != nil || b.requests.Load() != 1 {
		t.Fatalf("%v, b=%d", err, b.requests.Load())
	}
}

func TestUpstreamUnsentWriteIsNotRetriedEither(t *testing.T) {
	port := coreDeadPort(t)
	b := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(&discovery.Backend{Port: port, Token: discovery.Token(testkit.NewToken(t))}, nil)
	src.onRecheck = func() { src.set(b.backend(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Method: "POST", Path: "/api/routines", Write: true})
	te := coreToolErr(t, err)
	if te.Message != MsgTransport || te.Detail["reason"] != "ConnectError" || b.requests.Load() != 0 {
		t.Fatalf("%+v b=%d", te, b.requests.Load())
	}
}

func TestUpstreamExpectedRuntimeIDIsNeverRetried(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	b := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(a.backend(), nil)
	src.onRecheck = func() { src.set(b.backend(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Path: "/api/health", ExpectedRuntimeID: a.runtimeID})
	te := coreToolErr(t, err)
	if te.Message != MsgTransport || b.requests.Load() != 0 || src.rechecks.Load() != 1 {
		t.Fatalf("%+v b=%d rechecks=%d", te, b.requests.Load(), src.rechecks.Load())
	}
}

func TestUpstreamPassesOrdinaryErrorsThrough(t *testing.T) {
	a := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		coreWriteJSON(w, 404, map[string]any{"detail": "Routine not found"})
	})
	src := newCoreSource()
	src.set(a.backend(), nil)
	u := NewUpstream(src, corePatient)
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Path: "/api/routines/9"})
	te := coreToolErr(t, err)
	if te.Code != CodeNotFound || te.Message != "Routine not found" || src.rechecks.Load() != 0 || a.requests.Load() != 1 {
		t.Fatalf("%+v", te)
	}
}

func TestUpstreamCloseDropsIdleConnections(t *testing.T) {
	a := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(a.backend(), nil)
	u := NewUpstream(src, corePatient)
	if _, err := u.Call(coreCtx(t), &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	u.Close()
	coreEventually(t, func() bool { return a.closed.Load() == 1 })
	// Still usable after Close (sessions may be winding down).
	if _, err := u.Call(coreCtx(t), &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	u.Close()
}

// coreEventually waits (bounded) for cond, for effects that happen on another goroutine.
func coreEventually(t *testing.T, cond func() bool) {
	t.Helper()
	ctx := coreCtx(t)
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not reached")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

var _ discovery.Source = (*coreSource)(nil)
var _ API = (*Upstream)(nil)
var _ API = (*Client)(nil)

func TestUpstreamRetriesOnlyOnce(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	b := newCoreFake(t, coreDropper)
	c := newCoreFake(t, nil)
	src := newCoreSource()
	src.set(a.backend(), nil)
	src.onRecheck = func() {
		switch src.rechecks.Load() {
		case 1:
			src.set(b.backend(), nil)
		case 2:
			src.set(c.backend(), nil)
		}
	}
	u := NewUpstream(src, corePatient)
	defer u.Close()
	info := &CallInfo{}
	_, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Path: "/api/executions"})
	te := coreToolErr(t, err)
	if te.Message != MsgTransport || a.requests.Load() != 1 || b.requests.Load() != 1 || c.requests.Load() != 0 {
		t.Fatalf("%+v a=%d b=%d c=%d", te, a.requests.Load(), b.requests.Load(), c.requests.Load())
	}
	if src.rechecks.Load() != 2 || !info.Retried || info.Requests != 2 {
		t.Fatalf("rechecks=%d info=%+v", src.rechecks.Load(), *info)
	}
}
