package discovery

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/scrub"
)

func TestResolve(t *testing.T) {
	home := "/home/u"
	var defState string
	if runtime.GOOS == "darwin" {
		defState = "/home/u/Library/Application Support/resmon"
	} else {
		defState = "/home/u/.local/state/resmon"
	}
	cases := []struct {
		name string
		t    Target
		want Resolved
	}{
		{"defaults", Target{Home: home},
			Resolved{defState, "default", filepath.Join(defState, "resmon.port"), "state_dir"}},
		{"state dir env", Target{Home: home, StateDir: "/s"},
			Resolved{"/s", "RESMON_STATE_DIR", "/s/resmon.port", "state_dir"}},
		{"db path puts the port file beside the db", Target{Home: home, StateDir: "/s", DBPath: "/data/resmon.db"},
			Resolved{"/s", "RESMON_STATE_DIR", "/data/resmon.port", "RESMON_DB_PATH"}},
		{"port file env wins over db path", Target{Home: home, StateDir: "/s", DBPath: "/data/resmon.db", PortFile: "/p/x.port"},
			Resolved{"/s", "RESMON_STATE_DIR", "/p/x.port", "RESMON_PORT_FILE"}},
	}
	if runtime.GOOS != "darwin" {
		cases = append(cases, struct {
			name string
			t    Target
			want Resolved
		}{"xdg", Target{Home: home, XDGStateHome: "/xdg"},
			Resolved{"/xdg/resmon", "default", "/xdg/resmon/resmon.port", "state_dir"}})
	}
	for _, c := range cases {
		if got := c.t.Resolve(); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTargetFromEnvAndKey(t *testing.T) {
	env := map[string]string{"RESMON_PORT": "9001", "RESMON_STATE_DIR": "/s", "RESMON_PORT_FILE": "/p",
		"RESMON_DB_PATH": "/d/db", "HOME": "/h", "XDG_STATE_HOME": "/x", "OTHER": "ignored"}
	got := TargetFromEnv(func(k string) string { return env[k] })
	want := Target{Port: "9001", StateDir: "/s", PortFile: "/p", DBPath: "/d/db", Home: "/h", XDGStateHome: "/x"}
	if got != want {
		t.Fatalf("TargetFromEnv = %+v, want %+v", got, want)
	}
	a := Target{Port: "9001", StateDir: "/s/", Home: "/h1"}
	b := Target{Port: " 09001", StateDir: "/s", Home: "/h2"} // HOME is irrelevant once the state dir is named
	if a.Key() != b.Key() {
		t.Errorf("equivalent targets have different keys: %q vs %q", a.Key(), b.Key())
	}
	for _, other := range []Target{
		{Port: "9002", StateDir: "/s"},
		{StateDir: "/s"},
		{Port: "junk", StateDir: "/s"},
		{Port: "9001", StateDir: "/t"},
		{Port: "9001", StateDir: "/s", PortFile: "/elsewhere/resmon.port"},
	} {
		if other.Key() == a.Key() {
			t.Errorf("target %+v shares key with %+v", other, a)
		}
	}
}

func TestCandidates(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "resmon.port")
	r := Resolved{StateDir: dir, PortFile: pf}
	write := func(s string) { writeInPlace(t, pf, s) }
	rm := func() { os.Remove(pf) }

	rm()
	c, u := Candidates(Target{}, r)
	if u != nil || len(c) != 1 || c[0] != (Candidate{DefaultPort, SourceDefault}) {
		t.Fatalf("nothing named: got %v %v, want [8742 default]", c, u)
	}
	c, u = Candidates(Target{Port: "9999"}, r)
	if u != nil || len(c) != 1 || c[0] != (Candidate{9999, SourceEnv}) {
		t.Fatalf("env only: got %v %v", c, u)
	}
	write("9001\n")
	c, u = Candidates(Target{}, r)
	if u != nil || len(c) != 1 || c[0] != (Candidate{9001, SourcePortFile}) {
		t.Fatalf("port file only: got %v %v", c, u)
	}
	c, u = Candidates(Target{Port: "8791"}, r)
	if u != nil || len(c) != 1 || c[0] != (Candidate{8791, SourceEnv}) {
		t.Fatalf("RESMON_PORT pins, the port file is not a second candidate: got %v %v", c, u)
	}
	c, _ = Candidates(Target{Port: "9001"}, r)
	if len(c) != 1 || c[0] != (Candidate{9001, SourceEnv}) {
		t.Fatalf("dedup: got %v", c)
	}
	write("  \n")
	c, u = Candidates(Target{}, r)
	if u != nil || len(c) != 1 || c[0].Port != DefaultPort {
		t.Fatalf("blank port file behaves as absent: got %v %v", c, u)
	}

	for _, bad := range []string{"abc", "0", "65536", "-1", "90 01", "1e3", "0x10", ""} {
		if bad == "" {
			continue
		}
		c, u = Candidates(Target{Port: bad}, r)
		if u == nil || u.Reason != ReasonBadPortEnv || c != nil || !strings.Contains(u.Message, "RESMON_PORT") {
			t.Errorf("RESMON_PORT=%q: got %v %+v, want bad_port_env", bad, c, u)
		}
	}
	for _, bad := range []string{"garbage", "0", "70000", "9001x", "v9001"} {
		write(bad)
		c, u = Candidates(Target{}, r)
		if u == nil || u.Reason != ReasonBadPortFile || c != nil || !strings.Contains(u.Message, pf) {
			t.Errorf("port file %q: got %v %+v, want bad_port_file naming the file", bad, c, u)
		}
	}
	// RESMON_PORT already named the instance: a garbage port file is noted, not fatal,
	// and still never widens the search to the default.
	write("garbage")
	c, u = Candidates(Target{Port: "9001"}, r)
	if u != nil || len(c) != 1 || c[0].Port != 9001 || c[0].Source != SourceEnv {
		t.Errorf("valid RESMON_PORT with garbage port file: got %v %+v, want only 9001 from env", c, u)
	}
	rm()
	if err := os.Mkdir(pf, 0o700); err != nil {
		t.Fatal(err)
	}
	_, u = Candidates(Target{}, r)
	if u == nil || u.Reason != ReasonUntrustedFile || !strings.Contains(u.Message, "not a regular file") {
		t.Errorf("port file is a directory: got %+v", u)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	tok := testkit.NewToken(t)
	writeInPlace(t, TokenFile(dir, 9001), tok+"\n")
	got, err := ReadToken(dir, 9001)
	if err != nil || got.Reveal() != tok {
		t.Fatalf("ReadToken = %v, %v", got, err)
	}
	if !scrub.Contains("x" + tok + "y") {
		t.Error("a token read from a file must be registered with scrub")
	}
	if s := got.String(); strings.Contains(s, tok) {
		t.Error("Token.String reveals the token")
	}

	if _, err := ReadToken(dir, 9002); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing: %v", err)
	}
	writeInPlace(t, TokenFile(dir, 9003), " \n")
	if _, err := ReadToken(dir, 9003); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty: %v", err)
	}
	partial := tok[:30]
	writeInPlace(t, TokenFile(dir, 9004), partial)
	_, err = ReadToken(dir, 9004)
	if err == nil || !strings.Contains(err.Error(), "does not hold a token") || strings.Contains(err.Error(), partial) {
		t.Errorf("malformed: %v", err)
	}
	if !scrub.Contains(partial) {
		t.Error("a partial token must still be registered with scrub")
	}
	if err := os.Mkdir(TokenFile(dir, 9005), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(dir, 9005); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func TestDiscoverEnvPortVerifiesAndKeepsIdentity(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	tg := stateTarget(dir)
	tg.Port = strconv.Itoa(f.Port)

	b, u, r, cands := Discover(context.Background(), tg, nil)
	if u != nil || b == nil {
		t.Fatalf("Discover: unavailable %+v", u)
	}
	if b.Port != f.Port || b.PortSource != SourceEnv || b.BaseURL != f.Base || b.Token.Reveal() != f.Token() ||
		b.Version != "2.3.0" || b.StateDir != dir || b.TokenFile != TokenFile(dir, f.Port) || b.VerifiedAt.IsZero() {
		t.Fatalf("backend = %+v", b)
	}
	if b.Identity == nil || b.RuntimeID() != f.RuntimeID() || b.Identity.SchemaVersion == nil || *b.Identity.SchemaVersion != 21 {
		t.Fatalf("identity = %+v", b.Identity)
	}
	if r.StateDir != dir || len(cands) != 1 || cands[0] != (Candidate{f.Port, SourceEnv}) {
		t.Fatalf("resolved %+v candidates %v", r, cands)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("want exactly one probe, got %+v", reqs)
	}
	if reqs[0].Path != "/api/health" || reqs[0].Host != "127.0.0.1:"+strconv.Itoa(f.Port) || reqs[0].HasOrigin ||
		reqs[0].AuthHeader != "Bearer "+f.Token() {
		t.Fatalf("probe request %+v", reqs[0])
	}
	wantChain := []string{
		"state dir " + dir + " (from RESMON_STATE_DIR) exists",
		"port " + strconv.Itoa(f.Port) + " from RESMON_PORT",
		"token file " + TokenFile(dir, f.Port) + " present",
		"GET " + f.Base + "/api/health → 200",
	}
	joined := strings.Join(b.Chain, "\n")
	for _, w := range wantChain {
		if !strings.Contains(joined, w) {
			t.Errorf("chain lacks %q:\n%s", w, joined)
		}
	}
	assertNoSecret(t, f.Token(), b, State{Backend: b, Resolved: r, Candidates: cands})
}

func TestDiscoverPortFileAndDefault(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	b, u, _, _ := Discover(context.Background(), stateTarget(dir), testOpts(deadPort(t)))
	if u != nil || b.Port != f.Port || b.PortSource != SourcePortFile {
		t.Fatalf("port file: %+v %+v", b, u)
	}

	// Neither env nor file: the default port (injected) is used.
	d := newFakeBackend(t)
	dir2 := t.TempDir()
	writeAtomic(t, TokenFile(dir2, d.Port), d.Token())
	b, u, _, cands := Discover(context.Background(), stateTarget(dir2), testOpts(d.Port))
	if u != nil || b.Port != d.Port || b.PortSource != SourceDefault || len(cands) != 1 || cands[0].Source != SourceDefault {
		t.Fatalf("default: %+v %+v %v", b, u, cands)
	}
}

// A named port that does not answer is unavailable; the default is never tried.
func TestDiscoverNamedPortNeverWidened(t *testing.T) {
	def := newFakeBackend(t) // stands in for a daemon on 8742 that must never be reached
	dead := deadPort(t)
	for _, how := range []string{"env", "port file"} {
		dir := t.TempDir()
		writeAtomic(t, TokenFile(dir, dead), testkit.NewToken(t))
		writeAtomic(t, TokenFile(dir, def.Port), def.Token())
		tg := stateTarget(dir)
		if how == "env" {
			tg.Port = strconv.Itoa(dead)
		} else {
			writeAtomic(t, filepath.Join(dir, PortFileName), strconv.Itoa(dead))
		}
		b, u, _, cands := Discover(context.Background(), tg, testOpts(def.Port))
		if b != nil || u == nil {
			t.Fatalf("%s: want unavailable, got %+v", how, b)
		}
		if u.Reason != ReasonNotRunning || u.Message != "resmon is not running. Start the resmon app and try again." {
			t.Errorf("%s: %+v", how, u)
		}
		if len(u.Tried) != 1 || u.Tried[0] != baseOf(dead) || len(cands) != 1 {
			t.Errorf("%s: tried %v candidates %v, want exactly [%s]", how, u.Tried, cands, baseOf(dead))
		}
		d := u.Detail()
		if tr, ok := d["tried"].([]string); !ok || len(tr) != 1 || len(d) != 1 {
			t.Errorf("%s: detail %v", how, d)
		}
	}
	if n := len(def.requests()); n != 0 {
		t.Fatalf("the default port was probed %d times after a named port failed", n)
	}
}

// Issue 11.3 / contract v2.3: a named port "never falls through to another port". With
// RESMON_PORT naming a dead port (or one answering 500) and a port file naming a live backend,
// the answer is unavailable for the named port, and the live backend sees no request at all.
func TestDiscoverNamedPortIsTheOnlyCandidate(t *testing.T) {
	live := newFakeBackend(t)
	bad := newFakeBackend(t)
	bad.set(func(f *fakeBackend) { f.status = 500 })
	dir := t.TempDir()
	writeInstance(t, dir, live) // port file and token of the live backend
	writeAtomic(t, TokenFile(dir, bad.Port), bad.Token())
	dead := deadPort(t)
	writeAtomic(t, TokenFile(dir, dead), testkit.NewToken(t))
	for _, named := range []int{dead, bad.Port} {
		tg := stateTarget(dir)
		tg.Port = strconv.Itoa(named)
		b, u, _, cands := Discover(context.Background(), tg, nil)
		if b != nil || u == nil || len(u.Tried) != 1 || u.Tried[0] != baseOf(named) {
			t.Fatalf("RESMON_PORT=%d: got %+v %+v, want unavailable naming only that port", named, b, u)
		}
		if len(cands) != 1 || cands[0] != (Candidate{named, SourceEnv}) {
			t.Fatalf("RESMON_PORT=%d: candidates %v", named, cands)
		}
		if !strings.Contains(strings.Join(u.Chain, "\n"), "the port file is not read when RESMON_PORT is set") {
			t.Errorf("chain does not state the rule: %v", u.Chain)
		}
	}
	if n := len(live.requests()); n != 0 {
		t.Fatalf("the port file's backend got %d requests although RESMON_PORT named another port", n)
	}
	if n := len(bad.requests()); n != 1 {
		t.Fatalf("the named port got %d probes, want 1", n)
	}
}

func TestDiscoverNoToken(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, PortFileName), strconv.Itoa(f.Port))
	cases := map[string]func(){
		"missing":   func() {},
		"empty":     func() { writeInPlace(t, TokenFile(dir, f.Port), "") },
		"malformed": func() { writeInPlace(t, TokenFile(dir, f.Port), "not a token!") },
	}
	wantLine := map[string]string{"missing": "does not exist", "empty": "is empty", "malformed": "does not hold a token"}
	for name, setup := range cases {
		os.RemoveAll(TokenFile(dir, f.Port))
		setup()
		b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
		if b != nil || u == nil || u.Reason != ReasonNoToken {
			t.Fatalf("%s: %+v %+v", name, b, u)
		}
		want := "No local API token was found for resmon at " + f.Base + " (looked in " + dir + "). Start resmon, or set " +
			"RESMON_STATE_DIR to the state directory of the instance you mean."
		if u.Message != want {
			t.Errorf("%s: message %q", name, u.Message)
		}
		if nt, _ := u.Detail()["no_token"].([]string); len(nt) != 1 || nt[0] != f.Base {
			t.Errorf("%s: detail %v", name, u.Detail())
		}
		if !strings.Contains(strings.Join(u.Chain, "\n"), TokenFile(dir, f.Port)+" "+wantLine[name]) {
			t.Errorf("%s: chain %v", name, u.Chain)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("a port without a token was probed %d times", n)
	}
}

func TestDiscoverStaleTokenRefused(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	stale := testkit.NewToken(t)
	writeAtomic(t, TokenFile(dir, f.Port), stale)
	writeAtomic(t, filepath.Join(dir, PortFileName), strconv.Itoa(f.Port))
	b, u, r, c := Discover(context.Background(), stateTarget(dir), nil)
	if b != nil || u == nil || u.Reason != ReasonTokenRefused {
		t.Fatalf("%+v %+v", b, u)
	}
	want := "resmon at " + f.Base + " refused the local API token found for it. The token file is left over from an " +
		"earlier run of that port; start resmon again, or point RESMON_STATE_DIR at the instance you mean."
	if u.Message != want {
		t.Errorf("message %q", u.Message)
	}
	if tr, _ := u.Detail()["token_refused"].([]string); len(tr) != 1 || tr[0] != f.Base {
		t.Errorf("detail %v", u.Detail())
	}
	if !strings.Contains(strings.Join(u.Chain, "\n"), "GET "+f.Base+"/api/health → 401 token_invalid") {
		t.Errorf("chain %v", u.Chain)
	}
	if !scrub.Contains(stale) {
		t.Error("a stale token must be registered with scrub")
	}
	detail, _ := json.Marshal(u.Detail())
	assertNoSecret(t, stale, u, string(detail), State{Unavailable: u, Resolved: r, Candidates: c})
}

func TestDiscoverVersionGuard(t *testing.T) {
	cases := []struct {
		version any
		ok      bool
	}{
		{"1.8.0", true}, {"1.8.2", true}, {"1.10.0", true}, {"2.0.0", true}, {" 2.3.0 ", true}, {"1.8.0.7", true},
		{"1.2.1", false}, {"1.7.9", false}, {"0.1.0", false}, {"", false}, {"garbage", false}, {"1.8", false},
		{"v2.3.0", false}, {"2.3.0-beta", false}, {nil, false}, {2.3, false},
	}
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	for _, c := range cases {
		f.set(func(f *fakeBackend) { f.version = c.version })
		b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
		if c.ok {
			if b == nil {
				t.Errorf("version %v refused: %+v", c.version, u)
			}
			continue
		}
		if b != nil || u == nil || u.Reason != ReasonVersionRejected {
			t.Errorf("version %v accepted or wrong reason: %+v %+v", c.version, b, u)
			continue
		}
		label, _ := c.version.(string)
		label = strings.TrimSpace(label)
		if label == "" {
			label = "unknown"
		}
		if !strings.Contains(u.Message, "version "+label+",") || !strings.Contains(u.Message, "1.8.0") ||
			!strings.Contains(u.Message, "background") {
			t.Errorf("version %v: message %q", c.version, u.Message)
		}
		rej, _ := u.Detail()["rejected"].([]string)
		if len(rej) != 1 || rej[0] != f.Base+" (v"+label+")" {
			t.Errorf("version %v: detail %v", c.version, u.Detail())
		}
	}
}

func TestDiscoverBadInputs(t *testing.T) {
	root := t.TempDir()

	// State dir missing: no_token naming it, chain says resmon never ran with it.
	missing := filepath.Join(root, "never")
	_, u, _, _ := Discover(context.Background(), stateTarget(missing), testOpts(deadPort(t)))
	if u == nil || u.Reason != ReasonNoToken || !strings.Contains(u.Message, "(looked in "+missing+")") ||
		!strings.Contains(strings.Join(u.Chain, "\n"), "does not exist — resmon has never run with this state dir") {
		t.Errorf("missing state dir: %+v", u)
	}

	// State dir is a file.
	file := filepath.Join(root, "file")
	writeInPlace(t, file, "x")
	_, u, _, _ = Discover(context.Background(), stateTarget(file), nil)
	if u == nil || u.Reason != ReasonBadStateDir || !strings.Contains(u.Message, file) || u.Tried == nil {
		t.Errorf("state dir is a file: %+v", u)
	}

	// Garbage RESMON_PORT and port file are reported, never widened.
	dir := t.TempDir()
	tg := stateTarget(dir)
	tg.Port = "eighty"
	_, u, _, cands := Discover(context.Background(), tg, nil)
	if u == nil || u.Reason != ReasonBadPortEnv || !strings.Contains(u.Message, `"eighty"`) || cands != nil {
		t.Errorf("bad env: %+v", u)
	}
	writeInPlace(t, filepath.Join(dir, PortFileName), "hello")
	_, u, _, _ = Discover(context.Background(), stateTarget(dir), nil)
	if u == nil || u.Reason != ReasonBadPortFile || !strings.Contains(u.Message, `"hello"`) {
		t.Errorf("bad port file: %+v", u)
	}
	// A token pasted by mistake into RESMON_PORT is not echoed.
	tok := testkit.NewToken(t)
	tg.Port = tok
	_, u, _, _ = Discover(context.Background(), tg, nil)
	assertNoSecret(t, tok, u)
}

func TestDiscoverHealthNotJSON(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	for _, body := range []string{"<html>hi</html>", `["not","an","object"]`, `null`, `"str"`} {
		f.set(func(f *fakeBackend) { f.rawBody = body })
		b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
		if b != nil || u == nil || u.Reason != ReasonBadHealth || !strings.Contains(u.Message, f.Base) {
			t.Errorf("body %q: %+v %+v", body, b, u)
		}
	}
}

func TestDiscoverIdentityKeptOrDropped(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	rid := f.RuntimeID()
	id := func(mod func(m map[string]any)) map[string]any {
		m := map[string]any{"contract_version": 1, "runtime_id": rid, "schema_version": nil, "corpus_id": nil,
			"build_id": nil, "extra": "ok"}
		mod(m)
		return m
	}
	valid := []any{id(func(map[string]any) {}), id(func(m map[string]any) { m["schema_version"] = 14 })}
	for _, v := range valid {
		f.set(func(f *fakeBackend) { f.identity = v })
		b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
		if b == nil || b.Identity == nil || b.RuntimeID() != rid {
			t.Errorf("valid identity %v dropped: %+v %+v", v, b, u)
		}
	}
	invalid := []any{
		"bad", 7, []any{},
		map[string]any{"runtime_id": "bad"},
		id(func(m map[string]any) { m["contract_version"] = true }),
		id(func(m map[string]any) { m["contract_version"] = 1.5 }),
		id(func(m map[string]any) { m["contract_version"] = 2 }),
		id(func(m map[string]any) { m["schema_version"] = "14" }),
		id(func(m map[string]any) { m["corpus_id"] = "c" }),
		id(func(m map[string]any) { m["build_id"] = "b" }),
		id(func(m map[string]any) { m["runtime_id"] = strings.ToUpper(rid) }),
		id(func(m map[string]any) { m["runtime_id"] = "{" + rid + "}" }),
		id(func(m map[string]any) { m["runtime_id"] = rid[:14] + "1" + rid[15:] }), // version 1
		id(func(m map[string]any) { delete(m, "build_id") }),
	}
	for _, v := range invalid {
		f.set(func(f *fakeBackend) { f.identity = v })
		b, u, _, _ := Discover(context.Background(), stateTarget(dir), nil)
		if b == nil {
			t.Errorf("identity %v: a malformed identity must not refuse the backend: %+v", v, u)
			continue
		}
		if b.Identity != nil || !strings.Contains(strings.Join(b.Chain, "\n"), "malformed identity") {
			t.Errorf("identity %v kept: %+v chain %v", v, b.Identity, b.Chain)
		}
	}
	f.set(func(f *fakeBackend) { f.identity = nil }) // a pre-2.3 backend: no identity, no complaint
	b, _, _, _ := Discover(context.Background(), stateTarget(dir), nil)
	if b == nil || b.Identity != nil || strings.Contains(strings.Join(b.Chain, "\n"), "malformed") {
		t.Errorf("no identity: %+v", b)
	}
}

func TestVersionAtLeast(t *testing.T) {
	min := []int{1, 8, 0}
	for v, want := range map[string]bool{"1.8.0": true, "1.9": true, "2": true, "1.8": false, "1": false,
		"01.08.00": true, "1..8": false, "1.8.x": false, "1.8.0.x": true /* only the first three parts count */, "1.8.-1": false} {
		if got := versionAtLeast(v, min); got != want {
			t.Errorf("versionAtLeast(%q) = %v, want %v", v, got, want)
		}
	}
}
