package discovery

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/resmongw/resmongw/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testkit.Exit))
}

// seenRequest is what the fake backend recorded about one request.
type seenRequest struct {
	Path       string
	Host       string
	HasOrigin  bool
	AuthHeader string
}

// fakeBackend is a tiny stand-in for resmon's guard and /api/health on 127.0.0.1.
type fakeBackend struct {
	t    testing.TB
	srv  *httptest.Server
	Port int
	Base string

	mu        sync.Mutex
	token     string
	runtimeID string
	version   any    // JSON value of "version"; nil leaves it out
	identity  any    // JSON value of "identity"; nil leaves it out
	status    int    // when non-zero, answer this status instead of health
	rawBody   string // when non-empty, answer 200 with this body verbatim
	pid       int    // health's "pid"; 0 leaves it out (no process to wait on: the watcher polls)
	seen      []seenRequest
}

func newFakeBackend(t testing.TB) *fakeBackend {
	t.Helper()
	f := &fakeBackend{t: t, token: testkit.NewToken(t), runtimeID: testkit.NewRuntimeID(t), version: "2.3.0"}
	f.identity = f.identityObj()
	f.start(0)
	t.Cleanup(f.stop)
	return f
}

func (f *fakeBackend) identityObj() map[string]any {
	return map[string]any{"contract_version": 1, "runtime_id": f.runtimeID, "schema_version": 21,
		"corpus_id": nil, "build_id": nil}
}

// start listens on port (0 for any) on 127.0.0.1; restarting on the same port is what
// a real resmon restart looks like.
func (f *fakeBackend) start(port int) {
	f.t.Helper()
	srv, port := testkit.ServeLoopback(f.t, port, http.HandlerFunc(f.serve))
	f.mu.Lock()
	f.srv = srv
	f.Port = port
	f.Base = "http://127.0.0.1:" + strconv.Itoa(f.Port)
	f.mu.Unlock()
}

func (f *fakeBackend) stop() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// restart stops the backend and starts a new process on the same port: new token, new runtime id.
func (f *fakeBackend) restart() {
	f.t.Helper()
	f.stop()
	f.mu.Lock()
	f.token, f.runtimeID = testkit.NewToken(f.t), testkit.NewRuntimeID(f.t)
	f.identity = f.identityObj()
	port := f.Port
	f.mu.Unlock()
	f.start(port)
}

func (f *fakeBackend) set(fn func(f *fakeBackend)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeBackend) Token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.token
}

func (f *fakeBackend) RuntimeID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runtimeID
}

func (f *fakeBackend) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

func (f *fakeBackend) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{Path: r.URL.Path, Host: r.Host, HasOrigin: len(r.Header.Values("Origin")) > 0,
		AuthHeader: r.Header.Get("Authorization")})
	token, version, identity, status, raw, port, pid := f.token, f.version, f.identity, f.status, f.rawBody, f.Port, f.pid
	f.mu.Unlock()

	refuse := func(code int, reason string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"detail": map[string]string{"reason": reason, "message": "refused"}})
	}
	// The guard, in the backend's order: Host, Origin, token.
	if r.Host != "127.0.0.1:"+strconv.Itoa(port) && r.Host != "localhost:"+strconv.Itoa(port) {
		refuse(http.StatusForbidden, "host_refused")
		return
	}
	if len(r.Header.Values("Origin")) > 0 {
		refuse(http.StatusForbidden, "origin_refused")
		return
	}
	auth := r.Header.Values("Authorization")
	if len(auth) == 0 {
		refuse(http.StatusUnauthorized, "token_missing")
		return
	}
	scheme, val, _ := strings.Cut(auth[0], " ")
	if len(auth) != 1 || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(val) != token {
		refuse(http.StatusUnauthorized, "token_invalid")
		return
	}
	if status != 0 {
		refuse(status, "boom")
		return
	}
	if r.URL.Path != "/api/health" {
		refuse(http.StatusNotFound, "not_found")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if raw != "" {
		_, _ = w.Write([]byte(raw))
		return
	}
	body := map[string]any{"status": "ok", "started_at": "2026-09-21T13:02:11Z"}
	if pid != 0 {
		body["pid"] = pid
	}
	if version != nil {
		body["version"] = version
	}
	if identity != nil {
		body["identity"] = identity
	}
	_ = json.NewEncoder(w).Encode(body)
}

// deadPort returns a loopback port that nothing listens on (it was free a moment ago).
func deadPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

func baseOf(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }

// writeAtomic writes like resmon does: a temp file in the same directory, then rename.
func writeAtomic(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// writeInPlace truncates and rewrites path, the way a naive writer does.
func writeInPlace(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// instance writes a backend's port file and token file into stateDir, atomically.
func writeInstance(t testing.TB, stateDir string, f *fakeBackend) {
	t.Helper()
	writeAtomic(t, filepath.Join(stateDir, TokenFilePrefix+strconv.Itoa(f.Port)), f.Token())
	writeAtomic(t, filepath.Join(stateDir, PortFileName), strconv.Itoa(f.Port))
}

// assertNoSecret fails if secret appears in any of the values, rendered as text and JSON.
func assertNoSecret(t *testing.T, secret string, values ...any) {
	t.Helper()
	for _, v := range values {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal %T: %v", v, err)
		}
		for _, s := range []string{string(js), fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v)} {
			if strings.Contains(s, secret) {
				t.Fatalf("token leaked in %T: %s", v, s)
			}
		}
	}
}

// stateTarget is a Target whose state dir and port file are both in dir (as resmon's
// own test harnesses set them).
func stateTarget(dir string) Target {
	return Target{StateDir: dir, Home: "/nonexistent-home"}
}

func testOpts(defPort int) *Options { return &Options{defaultPort: defPort} }
