package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/tools"
)

// A full run through every tool, a restart, a stale token, status, and a harness config
// written by `resmongw config`: the token appears nowhere (the world's end-of-test check
// searches every output, tool result, status JSON, the daemon log and every file under HOME),
// the socket is 0600 in a 0700 directory, and every request the simulator saw carried the
// loopback Host and no Origin (also checked at the end of every other test).
func TestSecurityTokenNeverLeaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 120*time.Second)
	s := w.connect(ctx, simEnv(sim)...) // autostarted daemon

	for _, tool := range tools.Tools {
		s.call(ctx, tool.Name, tool.Example) // what matters is that each one runs
	}
	for _, out := range []string{w.runStatus(ctx, simEnv(sim)...), w.runStatus(ctx)} {
		if !json.Valid([]byte(out)) {
			t.Fatalf("status --json is not JSON: %q", out)
		}
	}
	w.restartSim(sim, resmonsim.RestartOptions{})
	s.eventually(ctx, 20*time.Second, "health", nil, ok, "the restarted backend")
	if err := sim.WriteStaleToken(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(sim.TokenFile()); err == nil {
		w.addToken(string(b))
	}
	s.eventually(ctx, 20*time.Second, "health", nil, unavailable, "the stale token refused")
	w.runStatus(ctx, simEnv(sim)...)

	// Harness configs: written into HOME, searched by the end-of-test check.
	for _, h := range []string{"codex", "cursor", "claude-desktop"} {
		cmd := exec.CommandContext(ctx, bin, "config", h, "--write", "--state-dir", sim.StateDir())
		cmd.Env = w.Env()
		cmd.Stdout, cmd.Stderr = w.output(), w.output()
		if err := cmd.Run(); err != nil {
			t.Fatalf("config %s: %v", h, err)
		}
	}

	fi, err := os.Stat(w.Socket)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v (%v), want 0600", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(w.Socket))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory mode %v (%v), want 0700", di.Mode(), err)
	}
	if len(sim.Requests()) < 25 {
		t.Fatalf("only %d backend requests recorded", len(sim.Requests()))
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Contains(string(b), `"msg":"tool call"`)
	}, "tool calls in the daemon log")
}

// update_settings refuses credential-shaped keys before it sends any request at all. (That
// no excluded endpoint is reachable is proven by the tools' route-resolution test,
// TestRoutesResolve in tools/routes_test.go.)
func TestSecurityCredentialKeysRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	_, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	for _, key := range []string{"openai_api_key", "smtp_password", "API_TOKEN", "client_secret", "github_credential", "authHeader"} {
		sim.ResetRequests()
		r := s.call(ctx, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{key: "x", "temperature": 0.2}})
		if r.code() != backend.CodeInvalidArgument {
			t.Fatalf("%s: %v %v", key, r.code(), r.payload)
		}
		if n := len(toolRequests(sim)); n != 0 {
			t.Fatalf("%s: %d requests reached the backend before the refusal", key, n)
		}
	}
}

// Garbage on a session (bad JSON, non-objects, a batch, a 4 MiB and a 20 MiB line, both
// over the 1 MiB line bound): the daemon survives, keeps serving a bystander session that
// was open all along, and accepts new sessions; the same daemon process serves throughout.
func TestBadInputDaemonSurvives(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	pid := w.daemonPID()
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 5*time.Minute)
	bystander := w.connect(ctx, simEnv(sim)...)
	bystander.must(ctx, "health", nil)

	huge := func(n int) string {
		return `{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", n) + `"}}`
	}
	inputs := map[string]string{
		"garbage":     "this is not json",
		"non-objects": "42\n\"str\"\nnull\n[]\ntrue",
		"batch":       `[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`,
		"bad ids":     `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		"4 MiB line":  huge(4 << 20),
		"20 MiB line": huge(20 << 20),
		"binary":      "\x00\x01\x02\xff\xfe",
	}
	for name, in := range inputs {
		cmd := exec.CommandContext(ctx, bin, "stdio")
		cmd.Env = w.Env(simEnv(sim)...)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = w.output()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_, _ = io.WriteString(stdin, testkit.InitializeRequest(`1`, "2025-06-18", "bad")+"\n")
			_, _ = io.WriteString(stdin, in+"\n")
			_ = stdin.Close()
		}()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("%s: non-JSON on stdout: %.200q", name, sc.Bytes())
			}
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(testkit.WaitLimit):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: the shim did not end after stdin closed", name)
		}
		cctx, cancel := context.WithTimeout(ctx, testkit.WaitLimit)
		bystander.must(cctx, "health", nil)
		cancel()
	}
	fresh := w.connect(ctx, simEnv(sim)...)
	fresh.must(ctx, "search_corpus", map[string]any{"query": "graph"})
	if now := w.daemonPID(); now != pid || !testkit.Alive(pid) {
		t.Fatalf("the daemon changed or died: pid %d -> %d", pid, now)
	}
}
