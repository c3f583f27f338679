package backend_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/scrub"
)

// What the client sends: the guard's headers, the loopback base, the identity check, no token
// anywhere it could leak.

func TestClientSendsGuardHeaders(t *testing.T) {
	type seen struct {
		method, host, path, query, auth, origin, ctype, accept, body string
		origins                                                      int
	}
	got := make(chan seen, 2)
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Host, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Origin"),
			r.Header.Get("Content-Type"), r.Header.Get("Accept"), string(b), len(r.Header.Values("Origin"))}
		backendtest.WriteJSON(w, 200, map[string]any{"ok": true})
	})
	c := backend.NewClient(f.Backend(), nil)
	defer c.Close()
	ctx := backendtest.Context(t)

	_, err := c.Call(ctx, &backend.Request{Method: "POST", Path: "/api/search", Query: url.Values{"limit": {"5"}, "q": {"a b"}},
		Body: map[string]any{"query": "graph <neural>", "n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	s := <-got
	wantHost := "127.0.0.1:" + strconv.Itoa(f.Port())
	if s.method != "POST" || s.host != wantHost || s.path != "/api/search" || s.auth != "Bearer "+f.Token {
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
	if strings.Contains(s.path+s.query, f.Token) {
		t.Fatal("token in the URL")
	}

	if _, err := c.Call(ctx, &backend.Request{Method: "GET", Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	s = <-got
	if s.method != "GET" || s.ctype != "" || s.body != "" || s.auth != "Bearer "+f.Token {
		t.Fatalf("GET request %+v", s)
	}
}

func TestClientBaseFromPortIsIPLiteral(t *testing.T) {
	f := backendtest.NewFake(t, nil)
	b := f.Backend()
	b.BaseURL = ""
	c := backend.NewClient(b, nil)
	defer c.Close()
	if want := "http://127.0.0.1:" + strconv.Itoa(f.Port()); c.BaseURL() != want {
		t.Fatalf("base %q, want %q", c.BaseURL(), want)
	}
	if _, err := c.Call(backendtest.Context(t), &backend.Request{Method: "GET", Path: "/api/health"}); err != nil {
		t.Fatal(err)
	}
	if c.Backend() != b {
		t.Fatal("Backend() is not the generation given")
	}
}

func TestClientIdentityCheck(t *testing.T) {
	var body string
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
	c := backend.NewClient(f.Backend(), nil)
	defer c.Close()
	ctx := backendtest.Context(t)
	ident := func(fields string) string {
		return `{"title":"private content","identity":{` + fields + `}}`
	}
	good := `"contract_version":1,"runtime_id":"` + testExpected + `","schema_version":21,"corpus_id":null,"build_id":null`

	cases := []struct {
		name, body, code string
	}{
		{"match", ident(good), ""},
		{"match with null schema and extra key", ident(`"contract_version":1,"runtime_id":"` + testExpected + `","schema_version":null,"corpus_id":null,"build_id":null,"extra":2`), ""},
		{"different instance", ident(strings.Replace(good, testExpected, testActual, 1)), backend.CodeInstanceMismatch},
		{"no identity", `{"title":"private content"}`, backend.CodeIdentityUnavailable},
		{"null identity", `{"title":"private content","identity":null}`, backend.CodeIdentityUnavailable},
		{"bad runtime id", ident(strings.Replace(good, testExpected, "bad", 1)), backend.CodeIdentityUnavailable},
		{"upper-case runtime id", ident(strings.Replace(good, testExpected, strings.ToUpper(testExpected), 1)), backend.CodeIdentityUnavailable},
		{"contract_version true", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":true`, 1)), backend.CodeIdentityUnavailable},
		{"contract_version 1.0", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":1.0`, 1)), backend.CodeIdentityUnavailable},
		{"contract_version 2", ident(strings.Replace(good, `"contract_version":1`, `"contract_version":2`, 1)), backend.CodeIdentityUnavailable},
		{"schema_version string", ident(strings.Replace(good, `"schema_version":21`, `"schema_version":"14"`, 1)), backend.CodeIdentityUnavailable},
		{"corpus_id set", ident(strings.Replace(good, `"corpus_id":null`, `"corpus_id":"c"`, 1)), backend.CodeIdentityUnavailable},
		{"build_id missing", ident(strings.Replace(good, `,"build_id":null`, ``, 1)), backend.CodeIdentityUnavailable},
		{"not an object", `["private content"]`, backend.CodeIdentityUnavailable},
		{"malformed JSON", `private content`, backend.CodeUpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body = tc.body
			v, err := c.Call(ctx, &backend.Request{Path: "/api/executions/7", ExpectedRuntimeID: testExpected})
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
			if tc.code == backend.CodeInstanceMismatch {
				want := map[string]any{"expected_runtime_id": testExpected, "actual_runtime_id": testActual}
				if !reflect.DeepEqual(te.Detail, want) || te.Message != backend.MsgInstanceMismatch {
					t.Fatalf("%+v", te)
				}
			} else if tc.code == backend.CodeIdentityUnavailable && te.Message != backend.MsgIdentityMissing {
				t.Fatalf("%q", te.Message)
			}
		})
	}
	// Without an expectation nothing is checked.
	body = `{"title":"private content"}`
	if _, err := c.Call(ctx, &backend.Request{Path: "/api/executions/7"}); err != nil {
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
		if !backend.ValidRuntimeID(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range bad {
		if backend.ValidRuntimeID(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestClientNeverLeaksToken(t *testing.T) {
	var f *backendtest.Fake
	f = backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo404":
			backendtest.WriteJSON(w, 404, map[string]any{"detail": "no item for token " + f.Token})
		case "/echo409":
			backendtest.WriteJSON(w, 409, map[string]any{"detail": map[string]any{"code": "instance_mismatch", "actual_runtime_id": f.Token}})
		case "/echo500":
			backendtest.WriteJSON(w, 500, map[string]any{"detail": r.Header.Get("Authorization")})
		case "/echo-ok":
			backendtest.WriteJSON(w, 200, map[string]any{"identity": map[string]any{"runtime_id": f.Token}})
		}
	})
	c := backend.NewClient(f.Backend(), nil)
	defer c.Close()
	ctx := backendtest.Context(t)
	var errs []error
	for _, p := range []string{"/echo404", "/echo409", "/echo500", "/echo-ok"} {
		_, err := c.Call(ctx, &backend.Request{Path: p, ExpectedRuntimeID: testExpected})
		errs = append(errs, err)
	}
	stale := f.Backend()
	stale.Token = discovery.Token(testkit.NewToken(t))
	sc := backend.NewClient(stale, nil)
	defer sc.Close()
	_, err := sc.Call(ctx, &backend.Request{Path: "/api/health"})
	errs = append(errs, err)
	dead := coreDeadPort(t)
	dc := backend.NewClient(&discovery.Backend{Port: dead, Token: discovery.Token(f.Token)}, nil)
	defer dc.Close()
	_, err = dc.Call(ctx, &backend.Request{Path: "/api/health"})
	errs = append(errs, err)

	for i, err := range errs {
		te := coreToolErr(t, err)
		out, _ := json.Marshal(te)
		for _, tok := range []string{f.Token, string(stale.Token)} {
			if strings.Contains(string(out), tok) || strings.Contains(te.Error(), tok) {
				t.Fatalf("case %d: token in %s", i, out)
			}
		}
	}
	if !scrub.Contains("x" + f.Token + "y") {
		t.Fatal("NewClient did not register the token with scrub")
	}
}
