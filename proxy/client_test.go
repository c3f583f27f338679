package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/scrub"
)

func TestClientSendsGuardHeaders(t *testing.T) {
	type seen struct {
		method, host, path, query, auth, origin, ctype, accept, body string
		origins                                                      int
	}
	got := make(chan seen, 2)
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Host, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Origin"),
			r.Header.Get("Content-Type"), r.Header.Get("Accept"), string(b), len(r.Header.Values("Origin"))}
		coreWriteJSON(w, 200, map[string]any{"ok": true})
	})
	c := NewClient(f.backend(), nil)
	defer c.Close()
	ctx := coreCtx(t)

	_, err := c.Call(ctx, &Request{Method: "POST", Path: "/api/search", Query: url.Values{"limit": {"5"}, "q": {"a b"}},
		Body: map[string]any{"query": "graph <neural>", "n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	s := <-got
	wantHost := "127.0.0.1:" + strconv.Itoa(f.port())
	if s.method != "POST" || s.host != wantHost || s.path != "/api/search" || s.auth != "Bearer "+f.token {
		t.Fatalf("request %+v (want host %s)", s, wantHost)
	}
	if s.origins != 0 || s.origin != "" {
		t.Fatalf("an Origin header was sent: %q", s.origin)
	}
	if s.ctype != "application/json" || s.accept != "application/json" {
		t.Fatalf("content-type %q accept %q", s.ctype, s.accept)
	}
	q, _ := url.ParseQuery(s.query)
	if q.Get("limit") != "5" || q.Get("q") != "a b" {
		t.Fatalf("query %q", s.query)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(s.body), &body); err != nil || body["query"] != "graph <neural>" || body["n"] != 3.0 {
		t.Fatalf("body %q (%v)", s.body, err)
	}
	if strings.Contains(s.path+s.query, f.token) {
		t.Fatal("token in the URL")
	}

	if _, err := c.Call(ctx, &Request{Method: "GET", Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	s = <-got
	if s.method != "GET" || s.ctype != "" || s.body != "" || s.auth != "Bearer "+f.token {
		t.Fatalf("GET request %+v", s)
	}
}

func TestClientBaseFromPortIsIPLiteral(t *testing.T) {
	f := newCoreFake(t, nil)
	b := f.backend()
	b.BaseURL = ""
	c := NewClient(b, nil)
	defer c.Close()
	if want := "http://127.0.0.1:" + strconv.Itoa(f.port()); c.BaseURL() != want {
		t.Fatalf("base %q, want %q", c.BaseURL(), want)
	}
	if _, err := c.Call(coreCtx(t), &Request{Method: "GET", Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if c.Backend() != b {
		t.Fatal("Backend() is not the generation given")
	}
}

func TestClientStatusMappingEndToEnd(t *testing.T) {
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		switch status {
		case 409:
			if r.URL.Query().Get("expected_runtime_id") != "" {
				coreWriteJSON(w, 409, map[string]any{"detail": map[string]any{"code": "instance_mismatch",
					"message": MsgInstanceMismatch, "expected_runtime_id": r.URL.Query().Get("expected_runtime_id"),
					"actual_runtime_id": testActual}})
				return
			}
			w.Header().Set("X-Resmon-Conflict", "routine_already_running")
			w.Header().Set("X-Resmon-Execution-Id", "12")
			coreWriteJSON(w, 409, map[string]any{"detail": "This routine is already running as execution 12."})
		case 422:
			coreWriteJSON(w, 422, map[string]any{"detail": []any{map[string]any{"type": "missing", "loc": []any{"body"}, "msg": "Field required"}}})
		case 403:
			coreWriteJSON(w, 403, map[string]any{"detail": map[string]any{"reason": "host_refused", "message": "x"}})
		default:
			coreWriteJSON(w, status, map[string]any{"detail": "backend says " + strconv.Itoa(status)})
		}
	})
	c := NewClient(f.backend(), nil)
	defer c.Close()
	ctx := coreCtx(t)
	cases := []struct {
		status   int
		expected string
		code     string
		msg      string
	}{
		{400, "", CodeInvalidArgument, "backend says 400"},
		{403, "", CodeInternalError, MsgUnexpected},
		{404, "", CodeNotFound, "backend says 404"},
		{405, "", CodeInternalError, "backend says 405"},
		{409, "", CodeConflict, "This routine is already running as execution 12."},
		{409, testExpected, CodeInstanceMismatch, MsgInstanceMismatch},
		{422, "", CodeInvalidArgument, MsgRejected},
		{429, "", CodeConflict, "backend says 429"},
		{500, "", CodeUpstreamError, "backend says 500"},
		{503, "", CodeUpstreamError, "backend says 503"},
	}
	for _, tc := range cases {
		r := &Request{Method: "GET", Path: "/status/" + strconv.Itoa(tc.status), ExpectedRuntimeID: tc.expected}
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
	_, err := c.Call(ctx, &Request{Method: "POST", Path: "/status/409", Write: true})
	if d := coreToolErr(t, err).Detail; d["conflict"] != "routine_already_running" || d["execution_id"] != int64(12) {
		t.Errorf("conflict detail %v", d)
	}
	_, err = c.Call(ctx, &Request{Path: "/status/409", Query: url.Values{"expected_runtime_id": {testExpected}}, ExpectedRuntimeID: testExpected})
	want := map[string]any{"expected_runtime_id": testExpected, "actual_runtime_id": testActual}
	if d := coreToolErr(t, err).Detail; !reflect.DeepEqual(d, want) {
		t.Errorf("mismatch detail %v", d)
	}
}

func TestClientSuccessBodies(t *testing.T) {
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
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
	c := NewClient(f.backend(), nil)
	defer c.Close()
	ctx := coreCtx(t)
	call := func(p string) (any, error) { return c.Call(ctx, &Request{Method: "GET", Path: p}) }

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
		if v != nil || te.Code != CodeUpstreamError || te.Message != MsgNotJSON || te.BackendGone {
			t.Fatalf("%s: %v %+v", p, v, te)
		}
	}
}

func TestClientBoundsResponseSize(t *testing.T) {
	const limit = 4096
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	})
	c := NewClient(f.backend(), &ClientOptions{MaxResponseBytes: limit})
	defer c.Close()
	ctx := coreCtx(t)
	v, err := c.Call(ctx, &Request{Path: "/big", Query: url.Values{"n": {strconv.Itoa(limit)}}})
	if err != nil || len(v.(string)) != limit {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = c.Call(ctx, &Request{Path: "/big", Query: url.Values{"n": {strconv.Itoa(limit + 1)}}})
	te := coreToolErr(t, err)
	if te.Code != CodeUpstreamError || te.Message != MsgTooLarge(limit) || te.BackendGone {
		t.Fatalf("over the limit: %+v", te)
	}
	// The client stays usable afterwards.
	if _, err := c.Call(ctx, &Request{Path: "/big", Query: url.Values{"n": {"3"}}}); err != nil {
		t.Fatal(err)
	}
}

func TestClientTransportErrors(t *testing.T) {
	ctx := coreCtx(t)

	t.Run("refused connection is not sent", func(t *testing.T) {
		port := coreDeadPort(t)
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		c := NewClient(&discovery.Backend{BaseURL: base, Port: port, Token: discovery.Token(testkit.NewToken(t))}, nil)
		defer c.Close()
		_, err := c.Call(ctx, &Request{Method: "POST", Path: "/api/routines", Body: map[string]any{}, Write: true})
		te := coreToolErr(t, err)
		if te.Code != CodeBackendUnavailable || te.Message != MsgTransport || !te.BackendGone || te.Sent {
			t.Fatalf("%+v", te)
		}
		if !reflect.DeepEqual(te.Detail, map[string]any{"tried": []string{base}, "reason": "ConnectError"}) {
			t.Fatalf("detail %v", te.Detail)
		}
	})

	t.Run("connection dropped mid-request may have been sent", func(t *testing.T) {
		f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		})
		c := NewClient(f.backend(), nil)
		defer c.Close()
		_, err := c.Call(ctx, &Request{Method: "POST", Path: "/api/routines/4/activate", Write: true})
		te := coreToolErr(t, err)
		if te.Code != CodeBackendUnavailable || te.Message != MsgTransport || !te.BackendGone || !te.Sent {
			t.Fatalf("%+v", te)
		}
		if r := te.Detail["reason"]; r != "RemoteProtocolError" && r != "ReadError" {
			t.Fatalf("reason %v", r)
		}
	})

	t.Run("request timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		c := NewClient(f.backend(), &ClientOptions{RequestTimeout: 100 * time.Millisecond})
		defer c.Close()
		_, err := c.Call(ctx, &Request{Path: "/api/executions"})
		te := coreToolErr(t, err)
		if te.Code != CodeBackendUnavailable || !te.BackendGone || !te.Sent || te.Detail["reason"] != "ReadTimeout" {
			t.Fatalf("%+v", te)
		}
	})

	t.Run("caller cancellation is not the backend's fault", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-r.Context().Done()
		})
		c := NewClient(f.backend(), nil)
		defer c.Close()
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-entered:
			case <-ctx.Done():
			}
			cancel()
		}()
		_, err := c.Call(cctx, &Request{Path: "/api/executions"})
		te := coreToolErr(t, err)
		if te.Message != MsgCancelled || te.BackendGone {
			t.Fatalf("%+v", te)
		}
	})
}

func TestClient401MeansBackendGone(t *testing.T) {
	f := newCoreFake(t, nil)
	b := f.backend()
	b.Token = discovery.Token(testkit.NewToken(t)) // a stale token from an earlier run
	c := NewClient(b, nil)
	defer c.Close()
	_, err := c.Call(coreCtx(t), &Request{Path: "/api/health"})
	te := coreToolErr(t, err)
	if te.Code != CodeBackendUnavailable || te.Message != MsgTokenRefused || !te.BackendGone || te.Sent {
		t.Fatalf("%+v", te)
	}
	if !reflect.DeepEqual(te.Detail, map[string]any{"tried": []string{f.srv.URL}}) {
		t.Fatalf("detail %v", te.Detail)
	}
}

func TestClientIdentityCheck(t *testing.T) {
	var body string
	f := newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
	c := NewClient(f.backend(), nil)
	defer c.Close()
	ctx := coreCtx(t)
	ident := func(fields string) string {
		return `{"title":"private content","identity":{` + fields + `}}`
	}
	good := `"contract_version":1,"runtime_id":"` + testExpected + `","schema_version":21,"corpus_id":null,"build_id":null`

	cases := []struct {
		name, body, code string
	}{
		{"match", ident(good), ""},
		{"match with null schema and extra key", ident(`"contract_version":1,"runtime_id":"` + testExpected + `","schema_version":null,"corpus_id":null,"build_id":null,"extra":2`), ""},
		{"different instance", ident(strings.Replace(good, testExpected, testActual, 1)), CodeInstanceMismatch},
		{"no identity", `{"title":"private content"}`, CodeIdentityUnavailable},
		{"null identity", `{"title":"private content","identity":null}`, CodeIdentityUnavailable},
		{"bad runtime id", ident(strings.Replace(good, testExpected, "bad", 1)), CodeIdentityUnavailable},
		{"upper-case runtime id", ident(strings.Replace(good, testExpected, strings.ToUpper(testExpected), 1)), CodeIdentityUnavailable},
		{"contract_version true", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":true`, 1)), CodeIdentityUnavailable},
		{"contract_version 1.0", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":1.0`, 1)), CodeIdentityUnavailable},
		{"contract_version 2", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":2`, 1)), CodeIdentityUnavailable},
		{"schema_version string", ident(strings.Replace(good, `"schema_version":21`, `"schema_version":"14"`, 1)), CodeIdentityUnavailable},
		{"corpus_id set", ident(strings.Replace(good, `"corpus_id":null`, `"corpus_id":"c"`, 1)), CodeIdentityUnavailable},
		{"build_id missing", ident(strings.Replace(good, `,"build_id":null`, ``, 1)), CodeIdentityUnavailable},
		{"not an object", `["private content"]`, CodeIdentityUnavailable},
		{"malformed JSON", `private content`, CodeUpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body = tc.body
			v, err := c.Call(ctx, &Request{Path: "/api/executions/7", ExpectedRuntimeID: testExpected})
			if tc.code == "" {
				if err != nil || v.(map[string]any)["title"] != "private content" {
					t.Fatalf("%v %v", v, err)
				}
				return
			}
			te := coreToolErr(t, err)
			if v != nil || te.Code != tc.code {
				t.Fatalf("%v %+v", v, te)
			}
			out, _ := json.Marshal(te)
			if strings.Contains(string(out)+te.Error(), "private content") {
				t.Fatal("content of a refused reply leaked into the error")
			}
			if tc.code == CodeInstanceMismatch {
				want := map[string]any{"expected_runtime_id": testExpected, "actual_runtime_id": testActual}
				if !reflect.DeepEqual(te.Detail, want) || te.Message != MsgInstanceMismatch {
					t.Fatalf("%+v", te)
				}
			} else if tc.code == CodeIdentityUnavailable && te.Message != MsgIdentityMissing {
				t.Fatalf("%q", te.Message)
			}
		})
	}
	// Without an expectation nothing is checked.
	body = `{"title":"private content"}`
	if _, err := c.Call(ctx, &Request{Path: "/api/executions/7"}); err != nil {
		t.Fatal(err)
	}
}

func TestValidRuntimeID(t *testing.T) {
	good := []string{testExpected, testActual, "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff"}
	bad := []string{"", "bad", strings.ToUpper(testExpected), "{" + testExpected + "}", "urn:uuid:" + testExpected,
		strings.ReplaceAll(testExpected, "-", ""),
		"3f0c6a0e-8a0b-1e53-9d0f-2c5b1a7e9d41", // version 1
		"3f0c6a0e-8a0b-4e53-7d0f-2c5b1a7e9d41", // not the RFC 4122 variant
		"3f0c6a0e-8a0b-4e53-cd0f-2c5b1a7e9d41",
		"3f0c6a0e-8a0b-4e53-9d0f-2c5b1a7e9d4g",
		"3f0c6a0e+8a0b-4e53-9d0f-2c5b1a7e9d41",
		testExpected + "0"}
	for _, s := range good {
		if !ValidRuntimeID(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range bad {
		if ValidRuntimeID(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestClientNeverLeaksToken(t *testing.T) {
	var f *coreFake
	f = newCoreFake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo404":
			coreWriteJSON(w, 404, map[string]any{"detail": "no item for token " + f.token})
		case "/echo409":
			coreWriteJSON(w, 409, map[string]any{"detail": map[string]any{"code": "instance_mismatch", "actual_runtime_id": f.token}})
		case "/echo500":
			coreWriteJSON(w, 500, map[string]any{"detail": r.Header.Get("Authorization")})
		case "/echo-ok":
			coreWriteJSON(w, 200, map[string]any{"identity": map[string]any{"runtime_id": f.token}})
		}
	})
	c := NewClient(f.backend(), nil)
	defer c.Close()
	ctx := coreCtx(t)
	var errs []error
	for _, p := range []string{"/echo404", "/echo409", "/echo500", "/echo-ok"} {
		_, err := c.Call(ctx, &Request{Path: p, ExpectedRuntimeID: testExpected})
		errs = append(errs, err)
	}
	stale := f.backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	sc := NewClient(stale, nil)
	defer sc.Close()
	_, err := sc.Call(ctx, &Request{Path: "/api/health"})
	errs = append(errs, err)
	dead := coreDeadPort(t)
	dc := NewClient(&discovery.Backend{Port: dead, Token: discovery.Token(f.token)}, nil)
	defer dc.Close()
	_, err = dc.Call(ctx, &Request{Path: "/api/health"})
	errs = append(errs, err)

	for i, err := range errs {
		te := coreToolErr(t, err)
		out, _ := json.Marshal(te)
		for _, tok := range []string{f.token, string(stale.Token)} {
			if strings.Contains(string(out), tok) || strings.Contains(te.Error(), tok) {
				t.Fatalf("case %d: token in %s", i, out)
			}
		}
	}
	if !scrub.Contains("x" + f.token + "y") {
		t.Fatal("NewClient did not register the token with scrub")
	}
}

func TestClientCloseDropsPooledConnections(t *testing.T) {
	f := newCoreFake(t, nil)
	c := NewClient(f.backend(), nil)
	ctx := coreCtx(t)
	for i := 0; i < 3; i++ {
		if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Fatalf("%d connections for 3 sequential calls; keep-alive not used", n)
	}
	c.Close()
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if n := f.conns.Load(); n != 2 {
		t.Fatalf("after Close the pooled connection was reused (%d connections)", n)
	}
	// A closed client does not keep the connection it just used.
	if _, err := c.Call(ctx, &Request{Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if n := f.conns.Load(); n != 3 {
		t.Fatalf("a closed client pooled a connection (%d connections)", n)
	}
}
