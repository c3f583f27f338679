package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// What a failed write says about its outcome.

// A write whose answer did not come within the request timeout is not reported as a
// restart: it gets its own sentence naming the timeout, keeps backend_unavailable and
// detail.reason ReadTimeout, and is still never replayed. A connection that broke keeps
// MsgWriteInterrupted (TestUpstreamNeverReplaysWrite).
func TestTimedOutWriteSaysItTimedOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	src := newCoreSource()
	src.set(f.backend(), nil)
	const timeout = 150 * time.Millisecond
	u := NewUpstream(src, &UpstreamOptions{Client: &ClientOptions{RequestTimeout: timeout}, RetryWait: 20 * time.Millisecond})
	defer u.Close()
	_, err := u.Call(coreCtx(t), &Request{Method: "PUT", Path: "/api/settings/email", Write: true})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Detail["reason"] != reasonReadTimeout {
		t.Fatalf("%+v", te)
	}
	if te.Message == MsgWriteInterrupted || strings.Contains(te.Message, "restarted") {
		t.Errorf("a timeout is reported as a restart: %q", te.Message)
	}
	if te.Message != MsgWriteTimedOut(timeout) || !strings.Contains(te.Message, timeout.String()) {
		t.Errorf("message %q, want %q", te.Message, MsgWriteTimedOut(timeout))
	}
	if f.requests.Load() != 1 {
		t.Errorf("%d requests: the write was replayed", f.requests.Load())
	}
}
