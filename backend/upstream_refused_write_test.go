package backend_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.10: a write refused with 401 (resmon restarted on the same port; our token is the
// previous instance's) was never run by the backend, so it is sent once on the next verified
// generation instead of failing with "it has probably restarted. Try again".

// writeCounter is a handler that counts the writes the backend actually ran (the guard of
// the fake answers 401 before it is reached).
func writeCounter(ran *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		backendtest.WriteJSON(w, 200, map[string]any{"id": 7})
	}
}

func TestUpstreamSendsATokenRefusedWriteOnceOnTheNextGeneration(t *testing.T) {
	var ran atomic.Int64
	f := backendtest.NewFake(t, writeCounter(&ran))
	stale := f.Backend()
	stale.Token = discovery.Token(testkit.NewToken(t)) // the previous instance's token
	src := backendtest.NewSource()
	src.Set(stale, nil)
	src.OnRecheck = func() { src.Set(f.Backend(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	info := &backend.CallInfo{}
	if _, err := u.Call(backend.WithCallInfo(backendtest.Context(t), info), &backend.Request{Method: "POST", Path: "/api/routines", Write: true}); err != nil {
		t.Fatalf("write after a same-port restart: %v", err)
	}
	if f.Requests.Load() != 2 || ran.Load() != 1 || src.Rechecks.Load() != 1 || !info.Retried || info.Generation != 2 {
		t.Fatalf("requests=%d ran=%d rechecks=%d info=%+v; want one refused, one run", f.Requests.Load(), ran.Load(), src.Rechecks.Load(), *info)
	}
}

// With no newer verified generation within RetryWait, the refusal is the answer: nothing was
// run and nothing was sent again.
func TestUpstreamTokenRefusedWriteWithoutNewGenerationIsNotSentAgain(t *testing.T) {
	var ran atomic.Int64
	f := backendtest.NewFake(t, writeCounter(&ran))
	stale := f.Backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	src := backendtest.NewSource()
	src.Set(stale, nil)
	u := backend.NewUpstream(src, &backend.UpstreamOptions{FirstCheckWait: time.Hour, RetryWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Method: "POST", Path: "/api/routines", Write: true})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeBackendUnavailable || te.Message != backend.MsgTokenRefused || f.Requests.Load() != 1 || ran.Load() != 0 {
		t.Fatalf("%+v requests=%d ran=%d", te, f.Requests.Load(), ran.Load())
	}
}

// A write is sent at most twice only when the first was refused: refused again on the next
// generation, it is not sent a third time; and a write that was on the wire when the next
// generation's connection broke is reported as of unknown outcome, never resent.
func TestUpstreamTokenRefusedWriteIsSentOnlyOnceMore(t *testing.T) {
	var ran atomic.Int64
	f := backendtest.NewFake(t, writeCounter(&ran))
	src := backendtest.NewSource()
	stale := func() *discovery.Backend {
		b := f.Backend()
		b.Token = discovery.Token(testkit.NewToken(t))
		return b
	}
	src.Set(stale(), nil)
	src.OnRecheck = func() { src.Set(stale(), nil) }
	u := backend.NewUpstream(src, backendtest.Patient)
	defer u.Close()
	_, err := u.Call(backendtest.Context(t), &backend.Request{Method: "POST", Path: "/api/routines", Write: true})
	if te := coreToolErr(t, err); te.Message != backend.MsgTokenRefused || f.Requests.Load() != 2 || ran.Load() != 0 {
		t.Fatalf("%+v requests=%d ran=%d", te, f.Requests.Load(), ran.Load())
	}

	d := backendtest.NewFake(t, coreDropper)
	src2 := backendtest.NewSource()
	staleD := d.Backend()
	staleD.Token = discovery.Token(testkit.NewToken(t))
	src2.Set(staleD, nil)
	src2.OnRecheck = func() { src2.Set(d.Backend(), nil) }
	u2 := backend.NewUpstream(src2, backendtest.Patient)
	defer u2.Close()
	_, err = u2.Call(backendtest.Context(t), &backend.Request{Method: "POST", Path: "/api/routines", Write: true})
	if te := coreToolErr(t, err); te.Message != backend.MsgWriteInterrupted || d.Requests.Load() != 2 {
		t.Fatalf("%+v requests=%d", te, d.Requests.Load())
	}
}
