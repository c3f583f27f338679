package resmonsim

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// mainHelper is this test binary run again as `resmongw dev backend` (see TestMain), its
// argument the JSON list of arguments.
const mainHelper = "resmonsim-main"

// TestMainAsAProcess runs `resmongw dev backend` for real (this test binary re-executed as
// mainHelper), then checks the start line, health with the token from the
// file, SIGHUP rotation and SIGTERM cleanup.
func TestMainAsAProcess(t *testing.T) {
	dir := t.TempDir()
	args, _ := json.Marshal([]string{"--state-dir", dir, "--run-duration", "1s"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testkit.HelperCommand(ctx, mainHelper, string(args))
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	stdout := &testkit.SyncBuffer{}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	startRE := regexp.MustCompile(`resmon simulator \(SIMULATED DATA\) listening on http://127\.0\.0\.1:(\d+), state dir (.+)\n`)
	var port string
	if !testkit.Poll(ctx, func() bool {
		m := startRE.FindStringSubmatch(stderr.String())
		if m != nil {
			port = m[1]
			if m[2] != dir {
				t.Errorf("start line names state dir %q", m[2])
			}
		}
		return m != nil
	}) {
		t.Fatalf("no start line; stderr: %s", stderr.String())
	}
	base := "http://127.0.0.1:" + port
	tf := filepath.Join(dir, "api-token-"+port)
	tok1, err := readFile(tf)
	if err != nil || !tokenRE.MatchString(tok1) {
		t.Fatalf("token file: %v", err)
	}
	if pf, _ := readFile(filepath.Join(dir, "resmon.port")); pf != port {
		t.Errorf("port file %q", pf)
	}
	h1 := send(t, base, tok1, "GET", "/api/health", nil).json(t)
	id1 := h1["identity"].(map[string]any)["runtime_id"]

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var tok2 string
	if !testkit.Poll(ctx, func() bool {
		tok2, _ = readFile(tf)
		return tokenRE.MatchString(tok2) && tok2 != tok1 && strings.Contains(stderr.String(), "restarted")
	}) {
		t.Fatalf("SIGHUP did not rotate the token; stderr: %s", stderr.String())
	}
	wantBody(t, send(t, base, tok1, "GET", "/api/health", nil), bodyTokenInvalid)
	h2 := send(t, base, tok2, "GET", "/api/health", nil).json(t)
	if h2["identity"].(map[string]any)["runtime_id"] == id1 {
		t.Errorf("runtime id kept across SIGHUP")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr: %s", err, stderr.String())
	}
	for _, f := range []string{tf, filepath.Join(dir, "resmon.port")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after SIGTERM", filepath.Base(f))
		}
	}
	leaks, err := testkit.TokenLeaks([]string{tok1, tok2}, testkit.Text{Name: "stderr", Body: stderr.String()},
		testkit.Text{Name: "stdout", Body: stdout.String()})
	if err != nil || len(leaks) > 0 {
		t.Errorf("the token was printed (on %v) %v", leaks, err)
	}
	// Every line is a log line of ours or the next steps it prints (no stray output).
	next := nextSteps(dir, false)
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "resmon simulator") && !strings.Contains(next, sc.Text()+"\n") {
			t.Errorf("unexpected stderr line %q", sc.Text())
		}
	}
}
