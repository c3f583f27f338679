package proxy

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

// A redirect is not something resmon does on a route the tools call; it must come back as an
// error, never as an empty (null) success.
func TestClientRedirectIsAnErrorNotAnEmptySuccess(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/api/routines")
			w.WriteHeader(status)
		})
		c := NewClient(f.backend(), nil)
		out, err := c.Call(context.Background(), &Request{Method: http.MethodGet, Path: "/api/routines/"})
		te, ok := err.(*ToolError)
		if !ok || te.Code != CodeInternalError || te.Message != MsgUnexpected {
			t.Errorf("%d: got %v, %v; want internal_error %q", status, out, err, MsgUnexpected)
		}
		if f.requests.Load() != 1 {
			t.Errorf("%d: the redirect was followed (%d requests)", status, f.requests.Load())
		}
		c.Close()
	}
}

// uvicorn closes a keep-alive connection after 5 s idle. A POST sent on a pooled connection at
// the moment the server closes it fails with EOF and cannot be retried safely, so the client must
// drop idle connections first.
func TestClientDropsIdleConnectionsBeforeUvicornDoes(t *testing.T) {
	const uvicornKeepAlive = 5 * time.Second
	c := NewClient(&discovery.Backend{BaseURL: "http://127.0.0.1:1", Port: 1}, nil)
	defer c.Close()
	tr, ok := c.http.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", c.http.Transport)
	}
	if tr.IdleConnTimeout <= 0 || tr.IdleConnTimeout >= uvicornKeepAlive {
		t.Fatalf("IdleConnTimeout = %v, want in (0, %v)", tr.IdleConnTimeout, uvicornKeepAlive)
	}
}

// Starlette answers an unhandled exception with a plain-text 500; the tool must give the
// reference's fallback sentence, not relay the framework's text.
func TestClientPlainText500GivesTheFallbackSentence(t *testing.T) {
	sim, err := resmonsim.Start(resmonsim.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	sim.SetFault(resmonsim.Fault{PathPrefix: "/api/routines", Status: 500})
	c := NewClient(&discovery.Backend{BaseURL: sim.BaseURL(), Port: sim.Port(), Token: discovery.Token(sim.Token())}, nil)
	defer c.Close()
	_, err = c.Call(context.Background(), &Request{Method: http.MethodGet, Path: "/api/routines"})
	te, ok := err.(*ToolError)
	if !ok || te.Code != CodeUpstreamError || te.Message != MsgUpstream {
		t.Fatalf("got %v, want upstream_error %q", err, MsgUpstream)
	}
}
