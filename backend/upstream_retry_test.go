package backend_test

import (
	"context"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// After a failed call: a read is retried once on a new generation, a write never is, and a
// crashed backend fails at once.

// waitHookSource is a fake Source that reports every Wait to onWait before it blocks, so a test
// can act exactly when the upstream starts waiting past a given generation.
type waitHookSource struct {
	*backendtest.Source
	onWait func(gen uint64)
}

func (s *waitHookSource) Wait(ctx context.Context, gen uint64) discovery.State {
	if s.onWait != nil {
		s.onWait(gen)
	}
	return s.Source.Wait(ctx, gen)
}

var notRunning = &discovery.Unavailable{Reason: discovery.ReasonNotRunning,
	Message: "resmon is not running. Start the resmon app and try again."}

// A backend killed with its files left: the re-check says "not running" at once, and the read
// that hit the dead connection fails within the restart grace, not after RetryWait (an hour
// here). If it waited RetryWait, the call would still be waiting when the context expires, and
// the context would be done on return.
func TestUpstreamCrashedBackendFailsWithoutRetryWait(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	src := &waitHookSource{Source: backendtest.NewSource()}
	src.Set(a.Backend(), nil)
	src.OnRecheck = func() { src.Set(nil, notRunning) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()

	ctx, cancel := context.WithTimeout(backendtest.Context(t), 10*backend.RestartGrace)
	defer cancel()
	info := &backend.CallInfo{}
	_, err := u.Call(backend.WithCallInfo(ctx, info), &backend.Request{Path: "/api/executions"})
	if ctx.Err() != nil {
		t.Fatalf("the call waited past the restart grace for a backend that is gone: %v", err)
	}
	te := coreToolErr(t, err)
	// The failed call keeps the reference's transport sentence; the next call reports the
	// watcher's reason.
	if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgTransport || info.Retried || a.Requests.Load() != 1 {
		t.Fatalf("%+v retried=%v requests=%d", te, info.Retried, a.Requests.Load())
	}
	_, err = u.Call(ctx, &backend.Request{Path: "/api/executions"})
	if te := coreToolErr(t, err); te.Code != backend.CodeBackendUnavailable || te.Message != notRunning.Message || a.Requests.Load() != 1 {
		t.Fatalf("next call: %+v", te)
	}
}

// A restart on the same instance: the re-check first finds the app gone, then the new
// instance appears while the upstream is in its grace wait; the read is retried there once.
func TestUpstreamRestartWithinGraceIsRetried(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	b := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		backendtest.WriteJSON(w, 200, map[string]any{"executions": []any{}})
	})
	src := &waitHookSource{Source: backendtest.NewSource()}
	src.Set(a.Backend(), nil)
	var downGen atomic.Uint64
	src.OnRecheck = func() { downGen.Store(src.Set(nil, notRunning)) }
	var published atomic.Bool
	src.onWait = func(gen uint64) {
		// Waiting past the "not running" generation: the upstream is in its grace wait.
		if gen != 0 && gen == downGen.Load() && published.CompareAndSwap(false, true) {
			src.Set(b.Backend(), nil)
		}
	}
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()

	info := &backend.CallInfo{}
	v, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Path: "/api/executions"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["executions"]; !ok || !published.Load() {
		t.Fatalf("%v (published %v)", v, published.Load())
	}
	if a.Requests.Load() != 1 || b.Requests.Load() != 1 || !info.Retried || info.Generation != downGen.Load()+1 {
		t.Fatalf("a=%d b=%d info=%+v", a.Requests.Load(), b.Requests.Load(), *info)
	}
}

// The grace changes nothing for writes and runtime-pinned reads: never replayed, even when the
// new instance is already there.
func TestUpstreamGraceNeverReplaysWritesOrPinnedReads(t *testing.T) {
	for _, pinned := range []bool{false, true} {
		a := backendtest.NewFake(t, coreDropper)
		r := &backend.Request{Method: "POST", Path: "/api/routines/4/run", Write: true}
		if pinned {
			r = &backend.Request{Path: "/api/health", ExpectedRuntimeID: a.RuntimeID}
		}
		b := backendtest.NewFake(t, nil)
		src := &waitHookSource{Source: backendtest.NewSource()}
		src.Set(a.Backend(), nil)
		src.OnRecheck = func() {
			src.Set(nil, notRunning)
			src.Set(b.Backend(), nil)
		}
		u := backend.NewUpstream(src, backendtest.Patient)
		_, err := u.Call(backendtest.Context(t), r)
		te := coreToolErr(t, err)
		if te.Code != backend.CodeBackendUnavailable || b.Requests.Load() != 0 || a.Requests.Load() != 1 {
			t.Fatalf("%s %s: %+v b=%d", r.Method, r.Path, te, b.Requests.Load())
		}
		u.Close()
	}
}

func TestUpstreamRetriesReadOnceAcrossRestart(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	b := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		backendtest.WriteJSON(w, 200, map[string]any{"executions": []any{}})
	})
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	src.OnRecheck = func() {
		// The watcher first sees the app down, then the new instance.
		src.Set(nil, &discovery.Unavailable{Message: "down"})
		go src.Set(b.Backend(), nil)
	}
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	info := &backend.CallInfo{}
	v, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Path: "/api/executions"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["executions"]; !ok {
		t.Fatalf("%v", v)
	}
	if a.Requests.Load() != 1 || b.Requests.Load() != 1 || src.Rechecks.Load() != 1 {
		t.Fatalf("a=%d b=%d rechecks=%d", a.Requests.Load(), b.Requests.Load(), src.Rechecks.Load())
	}
	if !info.Retried || info.Requests != 2 || info.Generation != 3 || info.BaseURL != b.Server.URL || info.RuntimeID != b.RuntimeID {
		t.Fatalf("info %+v", *info)
	}
}

func TestUpstreamRetriesReadAfterTokenRotation(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	stale := f.Backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	src := backendtest.NewSource()
	src.Set(stale, nil)
	src.OnRecheck = func() { src.Set(f.Backend(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	if _, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if f.Requests.Load() != 2 {
		t.Fatalf("%d requests", f.Requests.Load())
	}
}

func TestUpstreamReadGivesUpWithoutNewGeneration(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	u := backend.NewUpstream(src, &backend.UpstreamOptions{RetryWait: 20 * time.Millisecond})
	defer u.Close()
	info := &backend.CallInfo{}
	_, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Path: "/api/executions"})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgTransport || a.Requests.Load() != 1 || src.Rechecks.Load() != 1 || info.Retried {
		t.Fatalf("%+v requests=%d rechecks=%d info=%+v", te, a.Requests.Load(), src.Rechecks.Load(), *info)
	}
}

func TestUpstreamNeverReplaysWrite(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	b := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	src.OnRecheck = func() { src.Set(b.Backend(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	info := &backend.CallInfo{}
	_, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Method: "POST", Path: "/api/routines/4/run", Write: true})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgWriteInterrupted {
		t.Fatalf("%+v", te)
	}
	if !reflect.DeepEqual(te.Detail["tried"], []string{a.Server.URL}) {
		t.Fatalf("detail %v", te.Detail)
	}
	if a.Requests.Load() != 1 || b.Requests.Load() != 0 || src.Rechecks.Load() != 1 || info.Retried || info.Requests != 1 {
		t.Fatalf("a=%d b=%d rechecks=%d info=%+v", a.Requests.Load(), b.Requests.Load(), src.Rechecks.Load(), *info)
	}
	// The next call goes to the new generation.
	if _, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health"}); err != nil || b.Requests.Load() != 1 {
		t.Fatalf("%v, b=%d", err, b.Requests.Load())
	}
}

func TestUpstreamUnsentWriteIsNotRetriedEither(t *testing.T) {
	port := coreDeadPort(t)
	b := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(&discovery.Backend{Port: port, Token: discovery.Token(testkit.NewToken(t))}, nil)
	src.OnRecheck = func() { src.Set(b.Backend(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Method: "POST", Path: "/api/routines", Write: true})
	te := coreToolErr(t, err)
	if te.Message != backend.MsgNotSent || te.Detail["reason"] != "ConnectError" || b.Requests.Load() != 0 {
		t.Fatalf("%+v b=%d", te, b.Requests.Load())
	}
}

func TestUpstreamExpectedRuntimeIDIsNeverRetried(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	b := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	src.OnRecheck = func() { src.Set(b.Backend(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/health", ExpectedRuntimeID: a.RuntimeID})
	te := coreToolErr(t, err)
	if te.Message != backend.MsgTransport || b.Requests.Load() != 0 || src.Rechecks.Load() != 1 {
		t.Fatalf("%+v b=%d rechecks=%d", te, b.Requests.Load(), src.Rechecks.Load())
	}
}

func TestUpstreamPassesOrdinaryErrorsThrough(t *testing.T) {
	a := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		backendtest.WriteJSON(w, 404, map[string]any{"detail": "Routine not found"})
	})
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Path: "/api/routines/9"})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeNotFound || te.Message != "Routine not found" || src.Rechecks.Load() != 0 || a.Requests.Load() != 1 {
		t.Fatalf("%+v", te)
	}
}

func TestUpstreamRetriesOnlyOnce(t *testing.T) {
	a := backendtest.NewFake(t, coreDropper)
	b := backendtest.NewFake(t, coreDropper)
	c := backendtest.NewFake(t, nil)
	src := backendtest.NewSource()
	src.Set(a.Backend(), nil)
	src.OnRecheck = func() {
		switch src.Rechecks.Load() {
		case 1:
			src.Set(b.Backend(), nil)
		case 2:
			src.Set(c.Backend(), nil)
		}
	}
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	info := &backend.CallInfo{}
	_, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Path: "/api/executions"})
	te := coreToolErr(t, err)
	if te.Message != backend.MsgTransport || a.Requests.Load() != 1 || b.Requests.Load() != 1 || c.Requests.Load() != 0 {
		t.Fatalf("%+v a=%d b=%d c=%d", te, a.Requests.Load(), b.Requests.Load(), c.Requests.Load())
	}
	if src.Rechecks.Load() != 2 || !info.Retried || info.Requests != 2 {
		t.Fatalf("rechecks=%d info=%+v", src.Rechecks.Load(), *info)
	}
}
