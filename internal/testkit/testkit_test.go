package testkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helpers these tests start: real child processes with known behaviour.
func TestMain(m *testing.M) {
	RunHelper("echo", func(arg string) int { os.Stdout.WriteString("helper got " + arg); return 3 })
	RunHelper("term-exits", func(string) int { return waitSignal(false) })
	RunHelper("term-ignored", func(string) int { return waitSignal(true) })
	Exit(m.Run())
}

// waitSignal says it is ready, then exits 0 on SIGTERM, or (ignore) keeps running through it.
func waitSignal(ignore bool) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	os.Stdout.WriteString("ready\n")
	if ignore {
		select {} // until SIGKILL
	}
	<-sig
	return 0
}

func startHelper(t *testing.T, name string) *Proc {
	t.Helper()
	ctx := Context(t, time.Minute)
	cmd := HelperCommand(ctx, name, "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	// Signal handling is set up once the helper says so.
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper %s: %q %v", name, line, err)
	}
	return p
}

// Every package's tests import testkit, so a package of the gateway imported here would be an
// import cycle for that package's own tests. The one exception is package ours, the
// stdlib-only trust rule the binary cache is checked by, whose tests are external for that
// reason.
func TestTestkitImportsOnlyStdlib(t *testing.T) {
	ctx := Context(t, time.Minute)
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if deps := strings.Fields(string(out)); !slices.Equal(deps, []string{"github.com/resmongw/resmongw/ours", "github.com/resmongw/resmongw/internal/testkit"}) {
		t.Fatalf("testkit depends on %q", deps)
	}
}

func TestHelperCommandRunsTheNamedHelper(t *testing.T) {
	cmd := HelperCommand(Context(t, time.Minute), "echo", "the argument", "UNUSED=1")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "helper got the argument" {
		t.Fatalf("helper: %q %v; want its output and exit 3", out, err)
	}
}

func TestProcStop(t *testing.T) {
	p := startHelper(t, "term-exits")
	if !Alive(p.Pid()) {
		t.Fatal("a running helper is not alive")
	}
	if p.Stop(30 * time.Second) {
		t.Fatal("Stop says SIGTERM was ignored by a helper that exits on it")
	}
	if p.Err() != nil {
		t.Fatalf("exit after SIGTERM: %v", p.Err())
	}
	if Alive(p.Pid()) {
		t.Fatal("a stopped, reaped helper is alive")
	}
	if p.Stop(time.Second) {
		t.Fatal("a second Stop of an exited process reports an ignored SIGTERM")
	}

	stubborn := startHelper(t, "term-ignored")
	if !stubborn.Stop(200 * time.Millisecond) {
		t.Fatal("Stop did not report the ignored SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(stubborn.Err(), &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the stubborn helper ended with %v, want SIGKILL", stubborn.Err())
	}
}

func TestStopPIDAndChildPIDs(t *testing.T) {
	p := startHelper(t, "term-ignored")
	if !slices.Contains(ChildPIDs(), p.Pid()) {
		t.Fatalf("ChildPIDs %v lacks the helper %d", ChildPIDs(), p.Pid())
	}
	if err := StopPID(p.Pid(), 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "ignored SIGTERM") {
		t.Fatalf("StopPID of a helper ignoring SIGTERM: %v", err)
	}
	<-p.Done()
	if !WaitGone(p.Pid(), 10*time.Second) || slices.Contains(ChildPIDs(), p.Pid()) {
		t.Fatal("the killed helper is still listed")
	}

	q := startHelper(t, "term-exits")
	if err := StopPID(q.Pid(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestWaitListening(t *testing.T) {
	socket := filepath.Join(ShortTempDir(t), "s.sock")
	exits := startHelper(t, "term-exits")
	exits.Stop(30 * time.Second)
	if err := WaitListening(socket, time.Minute, exits); err == nil || !strings.Contains(err.Error(), "exited before listening") {
		t.Fatalf("a process that exited: %v", err)
	}
	if err := WaitListening(socket, 50*time.Millisecond, nil); err == nil {
		t.Fatal("nothing listens, yet WaitListening succeeded")
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := WaitListening(socket, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
}

func TestWorld(t *testing.T) {
	w := NewWorld(t)
	env := w.Env("EXTRA=1")
	want := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Home, "XDG_STATE_HOME=" + filepath.Join(w.Home, "state"),
		"RESMONGW_SOCKET=" + w.Socket, NoRaceExitSleep, "EXTRA=1"}
	if !slices.Equal(env, want) {
		t.Fatalf("env %q, want %q", env, want)
	}
	if len(w.Socket) > 100 {
		t.Fatalf("socket path of %d bytes does not fit sun_path", len(w.Socket))
	}
	if w.DaemonPID() != 0 {
		t.Fatal("a daemon pid without a lock file")
	}
	if err := os.MkdirAll(filepath.Dir(w.LockFile()), 0o700); err != nil {
		t.Fatal(err)
	}
	for content, pid := range map[string]int{"4242\n": 4242, "junk": 0, "1": 0} {
		if err := os.WriteFile(w.LockFile(), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := w.DaemonPID(); got != pid {
			t.Errorf("lock file %q: pid %d, want %d", content, got, pid)
		}
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, time.Minute, func() bool { n++; return n == 3 }, "the third look")
	if n != 3 {
		t.Fatalf("cond called %d times", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if Poll(ctx, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
}

func TestTokenLeaks(t *testing.T) {
	tok := strings.Repeat("k", 43)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"token":"`+tok+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clean"), []byte("nothing here"), 0o600); err != nil {
		t.Fatal(err)
	}
	texts := append([]Text{{"stderr", "a line\n"}, {"stdout", "x" + tok + "y"}}, FilesUnder(dir)...)
	leaks, err := TokenLeaks([]string{"other-token-of-some-length", tok}, texts...)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"stdout", filepath.Join(dir, "config.json")}; !slices.Equal(leaks, want) {
		t.Fatalf("leaks %q, want %q", leaks, want)
	}
	if _, err := TokenLeaks([]string{tok, "short"}); err == nil || strings.Contains(err.Error(), "short") {
		t.Fatalf("a short token: %v; want an error that does not quote it", err)
	}
}

func TestDialPreamble(t *testing.T) {
	socket := filepath.Join(ShortTempDir(t), "s.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		_, _ = c.Write([]byte(`{"ok":true,"got":` + strconv.Quote(line) + "}\n" + "the stream\n"))
	}()
	c, br, reply, err := DialPreamble(socket, []byte("{\"pre\":1}\n"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var r struct {
		OK  bool
		Got string
	}
	if err := json.Unmarshal(reply, &r); err != nil || !r.OK || r.Got != "{\"pre\":1}\n" {
		t.Fatalf("reply %q: %v", reply, err)
	}
	if rest, err := br.ReadString('\n'); rest != "the stream\n" {
		t.Fatalf("after the reply: %q %v", rest, err)
	}
}

func TestInitializeRequest(t *testing.T) {
	var m struct {
		JSONRPC string
		ID      any
		Method  string
		Params  struct {
			ProtocolVersion string
			ClientInfo      struct{ Name string }
		}
	}
	line := InitializeRequest(`"boot"`, "2025-06-18", "t")
	if err := json.Unmarshal([]byte(line), &m); err != nil || strings.Contains(line, "\n") {
		t.Fatalf("%q: %v", line, err)
	}
	if m.JSONRPC != "2.0" || m.ID != "boot" || m.Method != "initialize" || m.Params.ProtocolVersion != "2025-06-18" || m.Params.ClientInfo.Name != "t" {
		t.Fatalf("decoded %+v", m)
	}
	if !json.Valid([]byte(InitializedNotification)) {
		t.Fatal("the initialized notification is not JSON")
	}
}

func TestNewTokenAndRuntimeID(t *testing.T) {
	uuid4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	token := regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	seen := map[string]bool{}
	for range 20 {
		tok, rid := NewToken(t), NewRuntimeID(t)
		if !token.MatchString(tok) || !uuid4.MatchString(rid) {
			t.Fatalf("token %d bytes, runtime id %q", len(tok), rid)
		}
		if seen[tok] || seen[rid] {
			t.Fatal("a repeated token or runtime id")
		}
		seen[tok], seen[rid] = true, true
	}
}

func TestServeLoopback(t *testing.T) {
	srv, port := ServeLoopback(t, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello " + r.URL.Path))
	}))
	if want := "http://127.0.0.1:" + strconv.Itoa(port); srv.URL != want || port == 0 {
		t.Fatalf("URL %s, port %d", srv.URL, port)
	}
	get := func() (string, error) {
		resp, err := http.Get(srv.URL + "/x")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(); err != nil || body != "hello /x" {
		t.Fatalf("GET: %q %v", body, err)
	}
	srv.Close()
	// Again on the same port, as a restarted backend.
	again, port2 := ServeLoopback(t, port, http.NotFoundHandler())
	defer again.Close()
	if port2 != port || again.URL != srv.URL {
		t.Fatalf("restart on %d came up on %d", port, port2)
	}
	http.DefaultClient.CloseIdleConnections()
}
