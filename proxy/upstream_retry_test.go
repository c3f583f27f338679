package proxy

import (
	"context"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// After a failed call: a read is retried once on a new generation, a write never is, and a
// crashed backend fails at once.

// waitHookSource is a fake Source that reports every Wait to onWait before it blocks, so a test
// can act exactly when the upstream starts waiting past a given generation.
type waitHookSource struct {
	*coreSource
	onWait func(gen uint64)
}

func (s *waitHookSource) Wait(ctx context.Context, gen uint64) discovery.State {
	if s.onWait != nil {
		s.onWait(gen)
	}
	return s.coreSource.Wait(ctx, gen)
}

var notRunning = &discovery.Unavailable{Reason: discovery.ReasonNotRunning,
	Message: "resmon is not running. Start the resmon app and try again."}

// A backend killed with its files left: the re-check says "not running" at once, and the read
// that hit the dead connection fails within the restart grace, not after RetryWait (an hour
// here). If it waited RetryWait, the call would still be waiting when the context expires, and
// the context would be done on return.
func TestUpstreamCrashedBackendFailsWithoutRetryWait(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	src := &waitHookSource{coreSource: newCoreSource()}
	src.set(a.backend(), nil)
	src.onRecheck = func() { src.set(nil, notRunning) }
	u := NewUpstream(src, corePatient)
	defer u.Close()

	ctx, cancel := context.WithTimeout(coreCtx(t), 10*restartGrace)
	defer cancel()
	info := &CallInfo{}
	_, err := u.Call(WithCallInfo(ctx, info), &Request{Path: "/api/executions"})
	if ctx.Err() != nil {
		t.Fatalf("the call waited past the restart grace for a backend that is gone: %v", err)
	}
	te := coreToolErr(t, err)
	// The failed call keeps the reference's transport sentence; the next call reports the
	// watcher's reason.
	if te.Code != CodeBackendUnavailable || te.Message != MsgTransport || info.Retried || a.requests.Load() != 1 {
		t.Fatalf("%+v retried=%v requests=%d", te, info.Retried, a.requests.Load())
	}
	_, err = u.Call(ctx, &Request{Path: "/api/executions"})
	if te := coreToolErr(t, err); te.Code != CodeBackendUnavailable || te.Message != notRunning.Message || a.requests.Load() != 1 {
		t.Fatalf("next call: %+v", te)
	}
}

// A restart on the same instance: the re-check first finds the app gone, then the new
// instance appears while the upstream is in its grace wait; the read is retried there once.
func TestUpstreamRestartWithinGraceIsRetried(t *testing.T) {
	a := newCoreFake(t, coreDropper)
	b := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		coreWriteJSON(w, 200, map[string]any{"executions": []any{}})
	})
	src := &waitHookSource{coreSource: newCoreSource()}
	src.set(a.backend(), nil)
	var downGen atomic.Uint64
	src.onRecheck = func() { downGen.Store(src.set(nil, notRunning)) }
	var published atomic.Bool
	src.onWait = func(gen uint64) {
		// Waiting past the "not running" generation: the upstream is in its grace wait.
		if gen != 0 && gen == downGen.Load() && published.CompareAndSwap(false, true) {
			src.set(b.backend(), nil)
		}
	}
	u := NewUpstream(src, corePatient)
	defer u.Close()

	info := &CallInfo{}
	v, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Path: "/api/executions"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["executions"]; !ok || !published.Load() {
		t.Fatalf("%v (published %v)", v, published.Load())
	}
	if a.requests.Load() != 1 || b.requests.Load() != 1 || !info.Retried || info.Generation != downGen.Load()+1 {
		t.Fatalf("a=%d b=%d info=%+v", a.requests.Load(), b.requests.Load(), *info)
	}
}

// The grace changes nothing for writes and runtime-pinned reads: never replayed, even when the
// new instance is already there.
func TestUpstreamGraceNeverReplaysWritesOrPinnedReads(t *testing.T) {
	for _, pinned := range []bool{false, true} {
		a := newCoreFake(t, coreDropper)
		r := &Request{Method: "POST", Path: "/api/routines/4/run", Write: true}
		if pinned {
			r = &Request{Path: "/api/health", ExpectedRuntimeID: a.runtimeID}
		}
		b := newCoreFake(t, nil)
		src := &waitHookSource{coreSource: newCoreSource()}
		src.set(a.backend(), nil)
		src.onRecheck = func() {
			src.set(nil, notRunning)
			src.set(b.backend(), nil)
		}
		u := NewUpstream(src, corePatient)
		_, err := u.Call(coreCtx(t), r)
		te := coreToolErr(t, err)
		if te.Code != CodeBackendUnavailable || b.requests.Load() != 0 || a.requests.Load() != 1 {
			t.Fatalf("%s %s: %+v b=%d", r.Method, r.Path, te, b.requests.Load())
		}
		u.Close()
	}
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
	if te.Message != MsgNotSent || te.Detail["reason"] != "ConnectError" || b.requests.Load() != 0 {
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
