package backend_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

// How the client turns a backend reply into a result: status mapping, success bodies, size
// bounds, redirects.

// A redirect is not something resmon does on a route the tools call; it must come back as an
// error, never as an empty (null) success.
func TestClientRedirectIsAnErrorNotAnEmptySuccess(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/api/routines")
			w.WriteHeader(status)
		})
		c := backend.NewClient(f.Backend(), nil)
		out, err := c.Call(context.Background(), &backend.Request{Method: http.MethodGet, Path: "/api/routines/"})
		te, ok := err.(*backend.ToolError)
		if !ok || te.Code != backend.CodeInternalError || te.Message != backend.MsgUnexpected {
			t.Errorf("%d: got %v, %v; want internal_error %q", status, out, err, backend.MsgUnexpected)
		}
		if f.Requests.Load() != 1 {
			t.Errorf("%d: the redirect was followed (%d requests)", status, f.Requests.Load())
		}
		c.Close()
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
	c := backend.NewClient(&discovery.Backend{BaseURL: sim.BaseURL(), Port: sim.Port(), Token: discovery.Token(sim.Token())}, nil)
	defer c.Close()
	_, err = c.Call(context.Background(), &backend.Request{Method: http.MethodGet, Path: "/api/routines"})
	te, ok := err.(*backend.ToolError)
	if !ok || te.Code != backend.CodeUpstreamError || te.Message != backend.MsgUpstream {
		t.Fatalf("got %v, want upstream_error %q", err, backend.MsgUpstream)
	}
}

func TestClientStatusMappingEndToEnd(t *testing.T) {
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		switch status {
		case 409:
			if r.URL.Query().Get("expected_runtime_id") != "" {
				backendtest.WriteJSON(w, 409, map[string]any{"detail": map[string]any{"code": "instance_mismatch",
					"message": backend.MsgInstanceMismatch, "expected_runtime_id": r.URL.Query().Get("expected_runtime_id"),
					"actual_runtime_id": testActual}})
				return
			}
			w.Header().Set("X-Resmon-Conflict", "routine_already_running")
			w.Header().Set("X-Resmon-Execution-Id", "12")
			backendtest.WriteJSON(w, 409, map[string]any{"detail": "This routine is already running as execution 12."})
		case 422:
			backendtest.WriteJSON(w, 422, map[string]any{"detail": []any{map[string]any{"type": "missing", "loc": []any{"body"}, "msg": "Field required"}}})
		case 403:
			backendtest.WriteJSON(w, 403, map[string]any{"detail": map[string]any{"reason": "host_refused", "message": "x"}})
		default:
			backendtest.WriteJSON(w, status, map[string]any{"detail": "backend says " + strconv.Itoa(status)})
		}
	})
	c := backend.NewClient(f.Backend(), nil)
	defer c.Close()
	ctx := backendtest.Context(t)
	cases := []struct {
		status   int
		expected string
		code     string
		msg      string
	}{
		{400, "", backend.CodeInvalidArgument, "backend says 400"},
		{403, "", backend.CodeInternalError, backend.MsgUnexpected},
		{404, "", backend.CodeNotFound, "backend says 404"},
		{405, "", backend.CodeInternalError, "backend says 405"},
		{409, "", backend.CodeConflict, "This routine is already running as execution 12."},
		{409, testExpected, backend.CodeInstanceMismatch, backend.MsgInstanceMismatch},
		{422, "", backend.CodeInvalidArgument, backend.MsgRejected},
		{429, "", backend.CodeConflict, "backend says 429"},
		{500, "", backend.CodeUpstreamError, "backend says 500"},
		{503, "", backend.CodeUpstreamError, "backend says 503"},
	}
	for _, tc := range cases {
		r := &backend.Request{Method: "GET", Path: "/status/" + strconv.Itoa(tc.status), ExpectedRuntimeID: tc.expected}
		if tc.expected != "" {
			r.Query = url.Values{"expected_runtime_id": {tc.expected}}
		}
		v, err := c.Call(ctx, r)
		te := coreToolErr(t, err)
		if v != nil || te.Code != tc.code || te.Message != tc.msg || te.BackendGone {
			t.Errorf("%d: got %v %+v", tc.status, v, te)
		}
	}
	// The conflict headers reach the detail; the mismatch carries both ids.
	_, err := c.Call(ctx, &backend.Request{Method: "POST", Path: "/status/409", Write: true})
	if d := coreToolErr(t, err).Detail; d["conflict"] != "routine_already_running" || d["execution_id"] != int64(12) {
		t.Errorf("conflict detail %v", d)
	}
	_, err = c.Call(ctx, &backend.Request{Path: "/status/409", Query: url.Values{"expected_runtime_id": {testExpected}}, ExpectedRuntimeID: testExpected})
	want := map[string]any{"expected_runtime_id": testExpected, "actual_runtime_id": testActual}
	if d := coreToolErr(t, err).Detail; !reflect.DeepEqual(d, want) {
		t.Errorf("mismatch detail %v", d)
	}
}

func TestClientSuccessBodies(t *testing.T) {
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(200)
		case "/ids":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": 9007199254740993, "score": 0.1, "big": 12345678901234567890, "list": [1, 2.50]}`))
		case "/bibtex":
			w.Header().Set("Content-Type", "application/x-bibtex; charset=utf-8")
			_, _ = w.Write([]byte("@article{a1,\n  title={X}\n}\n"))
		case "/json-as-text":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(`[1,"two"]`))
		case "/broken":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(`{"papers": [1, 2`))
		case "/trailing":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"a":1} {"b":2}`))
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			_, _ = w.Write([]byte(`not json`))
		}
	})
	c := backend.NewClient(f.Backend(), nil)
	defer c.Close()
	ctx := backendtest.Context(t)
	call := func(p string) (any, error) { return c.Call(ctx, &backend.Request{Method: "GET", Path: p}) }

	if v, err := call("/empty"); v != nil || err != nil {
		t.Fatalf("empty: %v %v", v, err)
	}
	v, err := call("/ids")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"big":12345678901234567890,"id":9007199254740993,"list":[1,2.50],"score":0.1}` {
		t.Fatalf("numbers did not round-trip exactly: %s", out)
	}
	if v, err := call("/bibtex"); err != nil || v != "@article{a1,\n  title={X}\n}\n" {
		t.Fatalf("bibtex: %#v %v", v, err)
	}
	if v, err := call("/json-as-text"); err != nil || !reflect.DeepEqual(v, []any{json.Number("1"), "two"}) {
		t.Fatalf("json as text/plain: %#v %v", v, err)
	}
	for _, p := range []string{"/broken", "/trailing", "/problem"} {
		v, err := call(p)
		te := coreToolErr(t, err)
		if v != nil || te.Code != backend.CodeUpstreamError || te.Message != backend.MsgNotJSON || te.BackendGone {
			t.Fatalf("%s: %v %+v", p, v, te)
		}
	}
}

func TestClientBoundsResponseSize(t *testing.T) {
	const limit = 4096
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	})
	c := backend.NewClient(f.Backend(), &backend.ClientOptions{MaxResponseBytes: limit})
	defer c.Close()
	ctx := backendtest.Context(t)
	v, err := c.Call(ctx, &backend.Request{Path: "/big", Query: url.Values{"n": {strconv.Itoa(limit)}}})
	if err != nil || len(v.(string)) != limit {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = c.Call(ctx, &backend.Request{Path: "/big", Query: url.Values{"n": {strconv.Itoa(limit + 1)}}})
	te := coreToolErr(t, err)
	if te.Code != backend.CodeUpstreamError || te.Message != backend.MsgTooLarge(limit) || te.BackendGone {
		t.Fatalf("over the limit: %+v", te)
	}
	// The client stays usable afterwards.
	if _, err := c.Call(ctx, &backend.Request{Path: "/big", Query: url.Values{"n": {"3"}}}); err != nil {
		t.Fatal(err)
	}
}
