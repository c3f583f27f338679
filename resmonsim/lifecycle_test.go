package resmonsim

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

func TestTokenAndPortFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // created by Start
	s := startSim(t, Options{StateDir: dir, DaemonLock: true})
	tf := filepath.Join(dir, "api-token-"+strconv.Itoa(s.Port()))
	if s.TokenFile() != tf {
		t.Fatalf("TokenFile %q", s.TokenFile())
	}
	st, err := os.Stat(tf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", st.Mode().Perm())
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v", dst.Mode().Perm())
	}
	tok, _ := readFile(tf)
	if !tokenRE.MatchString(tok) || tok != s.Token() {
		t.Errorf("token file content is not the 43-char token (len %d)", len(tok))
	}
	if port, _ := readFile(filepath.Join(dir, "resmon.port")); port != strconv.Itoa(s.Port()) {
		t.Errorf("port file %q", port)
	}
	lock, _ := readFile(filepath.Join(dir, "daemon.lock"))
	if !strings.Contains(lock, `"port":`+strconv.Itoa(s.Port())) || !strings.Contains(lock, `"version":"2.3.0"`) {
		t.Errorf("daemon.lock %s", lock)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tf, filepath.Join(dir, "resmon.port"), filepath.Join(dir, "daemon.lock")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s survives a clean stop", filepath.Base(f))
		}
	}
}

func TestNoPortFileAndCustomPortFile(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, Options{StateDir: dir, PortFile: "-"})
	if _, err := os.Stat(filepath.Join(dir, "resmon.port")); !os.IsNotExist(err) {
		t.Errorf("port file written with PortFile \"-\"")
	}
	pf := filepath.Join(t.TempDir(), "backend.port")
	s2 := startSim(t, Options{StateDir: dir, PortFile: pf})
	if got, _ := readFile(pf); got != strconv.Itoa(s2.Port()) {
		t.Errorf("custom port file %q", got)
	}
	_ = s
}

func TestKillLeavesFilesAndStaleTokenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, Options{StateDir: dir})
	old, tf := s.Token(), s.TokenFile()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(tf); got != old {
		t.Fatalf("token file did not survive a crash")
	}
	if _, err := os.Stat(filepath.Join(dir, "resmon.port")); err != nil {
		t.Fatalf("port file did not survive a crash: %v", err)
	}
	// The seeded running execution belonged to the crashed process.
	if err := s.Restart(RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(tf); got == old || got != s.Token() {
		t.Fatalf("restart did not overwrite the stale token file")
	}
	wantBody(t, send(t, s.BaseURL(), old, "GET", "/api/health", nil), bodyTokenInvalid)
	e := do(t, s, "GET", "/api/executions/8", nil).json(t)
	if e["status"] != "interrupted" || e["interrupted_reason"] != "owner_dead" {
		t.Errorf("crashed run: status %v reason %v", e["status"], e["interrupted_reason"])
	}
}

func TestRestartRotatesTokenAndRuntimeID(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, Options{StateDir: dir})
	port, oldTok, oldID := s.Port(), s.Token(), s.RuntimeID()
	if err := s.Restart(RestartOptions{InPlace: true, Delay: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if s.Port() != port {
		t.Errorf("port changed without NewPort")
	}
	if s.Token() == oldTok || s.RuntimeID() == oldID || !uuid4RE().MatchString(s.RuntimeID()) {
		t.Errorf("restart kept token or runtime id")
	}
	if got, _ := readFile(s.TokenFile()); got != s.Token() {
		t.Errorf("token file not rewritten")
	}
	midID := s.RuntimeID()
	wantBody(t, send(t, s.BaseURL(), oldTok, "GET", "/api/health", nil), bodyTokenInvalid)
	h := do(t, s, "GET", "/api/health", nil).json(t)
	if h["identity"].(map[string]any)["runtime_id"] != s.RuntimeID() {
		t.Errorf("health identity %v", h["identity"])
	}
	// A graceful stop interrupts what was running (daemon_restart).
	e := do(t, s, "GET", "/api/executions/8", nil).json(t)
	if e["interrupted_reason"] != "daemon_restart" || e["cancel_reason"] != "daemon_restart" {
		t.Errorf("after graceful restart: %v %v", e["interrupted_reason"], e["cancel_reason"])
	}

	oldFile := s.TokenFile()
	if err := s.Restart(RestartOptions{NewPort: true}); err != nil {
		t.Fatal(err)
	}
	if s.Port() == port {
		t.Errorf("NewPort kept the port")
	}
	if _, err := os.Stat(oldFile); !os.IsNotExist(err) {
		t.Errorf("old port's token file left after a clean stop")
	}
	if got, _ := readFile(filepath.Join(dir, "resmon.port")); got != strconv.Itoa(s.Port()) {
		t.Errorf("port file %q after NewPort", got)
	}
	wantStatus(t, do(t, s, "GET", "/api/health", nil), 200)
	recs := s.Requests()
	if recs[0].RuntimeID != midID || recs[len(recs)-1].RuntimeID != s.RuntimeID() {
		t.Errorf("records do not carry the answering instance's runtime id")
	}
}

func TestStopLeavesASuccessorsTokenFile(t *testing.T) {
	s := startSim(t, Options{})
	if err := s.WriteStaleToken(); err != nil {
		t.Fatal(err)
	}
	stale, _ := readFile(s.TokenFile())
	if !tokenRE.MatchString(stale) || stale == s.Token() {
		t.Fatalf("stale token is not a different valid-looking token")
	}
	wantBody(t, send(t, s.BaseURL(), stale, "GET", "/api/health", nil), bodyTokenInvalid)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(s.TokenFile()); got != stale {
		t.Errorf("Stop removed a token file that was not its own")
	}
}

func TestFaultsDelayAndVersion(t *testing.T) {
	s := startSim(t, Options{})
	s.SetFault(Fault{PathPrefix: "/api/routines", Status: 503, Count: 1})
	wantStatus(t, do(t, s, "GET", "/api/routines", nil), 503)
	wantStatus(t, do(t, s, "GET", "/api/routines", nil), 200)

	s.SetFault(Fault{PathPrefix: "/api/health", MalformedJSON: true})
	r := do(t, s, "GET", "/api/health", nil)
	wantStatus(t, r, 200)
	if len(r.body) == 0 || r.body[len(r.body)-1] == '}' {
		t.Errorf("malformed body %q", r.body)
	}
	// Faults apply behind the guard.
	wantBody(t, send(t, s.BaseURL(), "", "GET", "/api/health", nil), bodyTokenMissing)
	s.ClearFaults()

	s.SetFault(Fault{PathPrefix: "/api/credentials", Drop: true})
	req, _ := http.NewRequest("GET", s.BaseURL()+"/api/credentials", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	if res, err := client.Do(req); err == nil {
		res.Body.Close()
		t.Errorf("dropped connection answered")
	}
	s.ClearFaults()

	s.SetVersion("1.7.9")
	if v := do(t, s, "GET", "/api/health", nil).json(t)["version"]; v != "1.7.9" {
		t.Errorf("version %v", v)
	}
	s.SetDelay(time.Hour)
	ctxClient := *client
	ctxClient.Timeout = 100 * time.Millisecond
	if res, err := ctxClient.Get(s.BaseURL() + "/api/health"); err == nil {
		res.Body.Close()
		t.Errorf("delayed reply arrived")
	}
	s.SetDelay(0)
	wantStatus(t, do(t, s, "GET", "/api/health", nil), 200)
}
