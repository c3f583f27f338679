package resmonsim

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

const (
	bodyTokenMissing = `{"detail":{"reason":"token_missing","message":"This request needs resmon's local API token."}}`
	bodyTokenInvalid = `{"detail":{"reason":"token_invalid","message":"The local API token on this request is not this resmon's."}}`
	bodyHostRefused  = `{"detail":{"reason":"host_refused","message":"resmon answers only requests addressed to 127.0.0.1 or localhost on its own port."}}`
	bodyOriginRefuse = `{"detail":{"reason":"origin_refused","message":"resmon answers browser requests only from its own window."}}`
)

func withHost(h string) func(*http.Request) { return func(r *http.Request) { r.Host = h } }

func withHeader(k string, vs ...string) func(*http.Request) {
	return func(r *http.Request) { r.Header[k] = vs }
}

func TestGuardRefusals(t *testing.T) {
	s := startSim(t, Options{})
	base, tok, p := s.BaseURL(), s.Token(), strconv.Itoa(s.Port())
	other := strconv.Itoa(s.Port() + 1)

	cases := []struct {
		name   string
		method string
		path   string
		token  string
		body   any
		mod    []func(*http.Request)
		status int
		want   string
	}{
		{"health needs the token", "GET", "/api/health", "", nil, nil, 401, bodyTokenMissing},
		{"wrong token", "GET", "/api/health", strings.Repeat("A", 43), nil, nil, 401, bodyTokenInvalid},
		{"basic scheme", "GET", "/api/health", "", nil, []func(*http.Request){withHeader("Authorization", "Basic "+tok)}, 401, bodyTokenInvalid},
		{"two authorization headers", "GET", "/api/health", "", nil,
			[]func(*http.Request){withHeader("Authorization", "Bearer "+tok, "Bearer "+tok)}, 401, bodyTokenInvalid},
		{"unknown path without token", "GET", "/api/nope", "", nil, nil, 401, bodyTokenMissing},
		{"bad body without token", "POST", "/api/search/sweep", "", "{not json", nil, 401, bodyTokenMissing},
		{"HEAD without token", "HEAD", "/api/health", "", nil, nil, 401, ""},
		{"OPTIONS without origin", "OPTIONS", "/api/health", "", nil, []func(*http.Request){withHeader("Access-Control-Request-Method", "GET")}, 401, bodyTokenMissing},
		{"foreign origin", "GET", "/api/health", tok, nil, []func(*http.Request){withHeader("Origin", "http://evil.example")}, 403, bodyOriginRefuse},
		{"localhost origin", "GET", "/api/health", tok, nil, []func(*http.Request){withHeader("Origin", "http://localhost:"+p)}, 403, bodyOriginRefuse},
		{"origin with slash", "GET", "/api/health", tok, nil, []func(*http.Request){withHeader("Origin", "http://127.0.0.1:"+p+"/")}, 403, bodyOriginRefuse},
		{"two origins", "GET", "/api/health", tok, nil,
			[]func(*http.Request){withHeader("Origin", "http://127.0.0.1:"+p, "http://127.0.0.1:"+p)}, 403, bodyOriginRefuse},
	}
	for _, h := range []string{"evil.example", "evil.example:" + p, "127.0.0.1:" + other, "localhost:" + other,
		"127.0.0.1", "[::1]:" + p, "127.0.0.1.nip.io:" + p} {
		cases = append(cases, struct {
			name   string
			method string
			path   string
			token  string
			body   any
			mod    []func(*http.Request)
			status int
			want   string
		}{"host " + h, "GET", "/api/health", tok, nil, []func(*http.Request){withHost(h)}, 403, bodyHostRefused})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := send(t, base, c.token, c.method, c.path, c.body, c.mod...)
			wantStatus(t, r, c.status)
			if c.want != "" {
				wantBody(t, r, c.want)
			}
			if got := r.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q", got)
			}
			wa := r.header.Get("WWW-Authenticate")
			if c.status == 401 && wa != `Bearer realm="resmon"` {
				t.Errorf("WWW-Authenticate %q", wa)
			}
			if c.status == 403 && (wa != "" || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Private-Network") != "") {
				t.Errorf("403 carries auth/CORS headers: %v", r.header)
			}
			if ct := r.header.Get("Content-Type"); c.want != "" && ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestGuardAccepts(t *testing.T) {
	s := startSim(t, Options{})
	p := strconv.Itoa(s.Port())
	tok := s.Token()

	r := send(t, s.BaseURL(), "", "GET", "/api/health", nil, withHeader("Authorization", "bearer   "+tok+"  "))
	wantStatus(t, r, 200)
	r = do(t, s, "GET", "/api/health", nil, withHost("localhost:"+p))
	wantStatus(t, r, 200)
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no-Origin request got CORS headers")
	}
	r = do(t, s, "GET", "/api/health", nil, withHeader("Origin", "http://127.0.0.1:"+p))
	wantStatus(t, r, 200)
	if r.header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:"+p {
		t.Errorf("renderer origin not echoed: %v", r.header)
	}
	// A preflight from the renderer needs no token.
	r = send(t, s.BaseURL(), "", "OPTIONS", "/api/routines", nil, withHeader("Origin", "http://127.0.0.1:"+p),
		withHeader("Access-Control-Request-Method", "POST"), withHeader("Access-Control-Request-Private-Network", "true"))
	wantStatus(t, r, 200)
	if r.header.Get("Access-Control-Allow-Private-Network") != "true" {
		t.Errorf("preflight headers %v", r.header)
	}
	// Behind the guard, the framework's defaults.
	r = do(t, s, "GET", "/api/nope", nil)
	wantStatus(t, r, 404)
	wantBody(t, r, `{"detail":"Not Found"}`)
	r = do(t, s, "DELETE", "/api/health", nil)
	wantStatus(t, r, 405)
	wantBody(t, r, `{"detail":"Method Not Allowed"}`)
	if r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	r = do(t, s, "HEAD", "/api/health", nil)
	wantStatus(t, r, 200)

	recs := s.Requests()
	if len(recs) != 7 {
		t.Fatalf("recorded %d requests, want 7", len(recs))
	}
	if !recs[0].HasAuth || !recs[0].AuthOK || recs[0].Status != 200 || recs[0].RuntimeID != s.RuntimeID() {
		t.Errorf("first record %+v", recs[0])
	}
	if recs[2].Origin != "http://127.0.0.1:"+p || recs[4].Path != "/api/nope" || recs[4].Status != 404 {
		t.Errorf("records %+v", recs)
	}
	s.ResetRequests()
	send(t, s.BaseURL(), "", "GET", "/api/health", nil)
	recs = s.Requests()
	if len(recs) != 1 || recs[0].HasAuth || recs[0].AuthOK || recs[0].Status != 401 {
		t.Errorf("after reset %+v", recs)
	}
}

func TestLegacyHasNoGuardAndNoTokenFile(t *testing.T) {
	s := startSim(t, Options{Legacy: true, NoIdentity: true, Version: "2.1.0"})
	r := send(t, s.BaseURL(), "", "GET", "/api/health", nil)
	wantStatus(t, r, 200)
	h := r.json(t)
	if _, ok := h["identity"]; ok || h["version"] != "2.1.0" {
		t.Errorf("legacy health %v", h)
	}
	if _, err := readFile(s.TokenFile()); err == nil {
		t.Errorf("legacy backend wrote a token file")
	}
	// The pre-2.3 backend ignores expected_runtime_id like any unknown parameter.
	wantStatus(t, send(t, s.BaseURL(), "", "GET", "/api/health?expected_runtime_id=bad", nil), 200)
}
