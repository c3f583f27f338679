package proxy

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.10: a write refused with 401 (resmon restarted on the same port; our token is the
// previous instance's) was never run by the backend, so it is sent once on the next verified
// generation instead of failing with "it has probably restarted. Try again".

// writeCounter is a handler that counts the writes the backend actually ran (the guard of
// coreFake answers 401 before it is reached).
func writeCounter(ran *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		coreWriteJSON(w, 200, map[string]any{"id": 7})
	}
}

func TestUpstreamSendsATokenRefusedWriteOnceOnTheNextGeneration(t *testing.T) {
	var ran atomic.Int64
	f := newCoreFake(t, writeCounter(&ran))
	stale := f.backend()
	stale.Token = discovery.Token(testkit.NewToken(t)) // the previous instance's token
	src := newCoreSource()
	src.set(stale, nil)
	src.onRecheck = func() { src.set(f.backend(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	info := &CallInfo{}
	if _, err := u.Call(WithCallInfo(coreCtx(t), info), &Request{Method: "POST", Path: "/api/routines", Write: true}); err != nil {
		t.Fatalf("write after a same-port restart: %v", err)
	}
	if f.requests.Load() != 2 || ran.Load() != 1 || src.rechecks.Load() != 1 || !info.Retried || info.Generation != 2 {
		t.Fatalf("requests=%d ran=%d rechecks=%d info=%+v; want one refused, one run", f.requests.Load(), ran.Load(), src.rechecks.Load(), *info)
	}
}

// With no newer verified generation within RetryWait, the refusal is the answer: nothing was
// run and nothing was sent again.
func TestUpstreamTokenRefusedWriteWithoutNewGenerationIsNotSentAgain(t *testing.T) {
	var ran atomic.Int64
	f := newCoreFake(t, writeCounter(&ran))
	stale := f.backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	src := newCoreSource()
	src.set(stale, nil)
	u := NewUpstream(src, &UpstreamOptions{FirstCheckWait: time.Hour, RetryWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Method: "POST", Path: "/api/routines", Write: true})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message != MsgTokenRefused || f.requests.Load() != 1 || ran.Load() != 0 {
		t.Fatalf("%+v requests=%d ran=%d", te, f.requests.Load(), ran.Load())
	}
}

// A write is sent at most twice only when the first was refused: refused again on the next
// generation, it is not sent a third time; and a write that was on the wire when the next
// generation's connection broke is reported as of unknown outcome, never resent.
func TestUpstreamTokenRefusedWriteIsSentOnlyOnceMore(t *testing.T) {
	var ran atomic.Int64
	f := newCoreFake(t, writeCounter(&ran))
	src := newCoreSource()
	stale := func() *discovery.Backend {
		b := f.backend()
		b.Token = discovery.Token(testkit.NewToken(t))
		return b
	}
	src.set(stale(), nil)
	src.onRecheck = func() { src.set(stale(), nil) }
	u := NewUpstream(src, corePatient)
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Method: "POST", Path: "/api/routines", Write: true})
	if te := coreToolErr(t, err); te.Message != MsgTokenRefused || f.requests.Load() != 2 || ran.Load() != 0 {
		t.Fatalf("%+v requests=%d ran=%d", te, f.requests.Load(), ran.Load())
	}

	d := newCoreFake(t, coreDropper)
	src2 := newCoreSource()
	staleD := d.backend()
	staleD.Token = discovery.Token(testkit.NewToken(t))
	src2.set(staleD, nil)
	src2.onRecheck = func() { src2.set(d.backend(), nil) }
	u2 := NewUpstream(src2, corePatient)
	defer u2.Close()
	_, err = u2.Call(coreCtx(t), &Request{Method: "POST", Path: "/api/routines", Write: true})
	if te := coreToolErr(t, err); te.Message != MsgWriteInterrupted || d.requests.Load() != 2 {
		t.Fatalf("%+v requests=%d", te, d.requests.Load())
	}
}
