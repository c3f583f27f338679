package daemon_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// The harness speaks raw JSON-RPC; everything on the shim's stdout must be JSON-RPC, and
// closing stdin ends the shim with exit 0.
func TestShimStdoutIsOnlyJSONRPC(t *testing.T) {
	t.Parallel()
	w, sim, ctx := servedWorld(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env(simEnv(sim)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 16<<20)
	var seen []string
	next := func() map[string]any {
		if !lines.Scan() {
			t.Fatalf("stdout ended early (%v); stderr %q", lines.Err(), stderr.String())
		}
		seen = append(seen, lines.Text())
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame on stdout: %q", lines.Text())
		}
		return m
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(testkit.InitializeRequest(`1`, "2025-06-18", "raw"))
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(testkit.InitializedNotification)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := next(); m["id"] != float64(2) {
		t.Fatalf("tools/list: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{}}}`)
	if m := next(); m["id"] != float64(3) {
		t.Fatalf("tools/call: %v", m)
	}
	stdin.Close()
	for lines.Scan() {
		seen = append(seen, lines.Text())
		var m map[string]any
		if json.Unmarshal(lines.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame on stdout: %q", lines.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("shim after stdin EOF: %v; stderr %q", err, stderr.String())
	}
	if len(seen) < 3 {
		t.Fatalf("saw %d frames", len(seen))
	}
	if stderr.String() != "" {
		t.Fatalf("shim wrote to stderr in normal operation: %q", stderr.String())
	}
}

// A harness that writes its requests and closes stdin at once (a pipe) still gets every
// answer: the shim half-closes, the daemon drains, then the shim exits 0.
func TestPipedRequestsAnsweredAfterStdinEOF(t *testing.T) {
	t.Parallel()
	w, sim, ctx := servedWorld(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env(simEnv(sim)...)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		testkit.InitializeRequest(`1`, "2025-06-18", "pipe"),
		testkit.InitializedNotification,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{}}}`,
	}, "\n") + "\n")
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shim: %v; stderr %q", err, stderr.String())
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC frame: %q", line)
		}
		if id, ok := m["id"].(float64); ok && m["result"] != nil {
			ids[id] = true
		}
	}
	if !ids[1] || !ids[2] || !ids[3] {
		t.Fatalf("answered ids %v, want 1, 2 and 3; stdout:\n%s", ids, out)
	}
	if !strings.Contains(string(out), sim.RuntimeID()) {
		t.Fatalf("the health answer lacks the backend's runtime id")
	}
}

// The harness dies without closing the shim's stdin: the shim notices its parent changed
// and exits instead of lingering as an orphan.
func TestShimExitsWhenParentDies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	ctx := testCtx(t)
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close() // held open: stdin never reaches EOF
	// sh stands in for the harness; the shim's stdin is our pipe (fd 3), not /dev/null.
	harness := exec.CommandContext(ctx, "sh", "-c", bin+" stdio <&3 >/dev/null & echo $!; exec sleep 60")
	harness.Env = w.Env()
	harness.ExtraFiles = []*os.File{r}
	stdout, _ := harness.StdoutPipe()
	if err := harness.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	shimPID := atoiT(t, strings.TrimSpace(line))
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return sessionsOpen(t, w) == 1 }, "the shim's session")
	_ = harness.Process.Kill()
	_ = harness.Wait()
	if !testkit.WaitGone(shimPID, testkit.WaitLimit) {
		t.Fatalf("shim %d still running after its parent died", shimPID)
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return sessionsOpen(t, w) == 0 }, "the session to close")
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func sessionsOpen(t *testing.T, w *world) int {
	out, _ := w.runStatus(testCtx(t), nil, "--json")
	return len(decodeStatus(t, out).Sessions)
}

// The harness closes its end of the shim's stdout while still holding stdin: the answer
// cannot be delivered, nobody is left to tell, and the shim exits 0 without a word (not
// killed by SIGPIPE).
func TestShimExitsQuietlyWhenHarnessClosesStdout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, bin, "stdio")
	cmd.Env = w.Env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	outR.Close() // the harness stops reading: the shim's next write fails
	if _, err := io.WriteString(stdin, testkit.InitializeRequest(`1`, "2025-06-18", "x")+"\n"); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err != nil || stderr.String() != "" {
		t.Fatalf("shim with its stdout closed: %v, stderr %q; want exit 0 and silence", err, stderr.String())
	}
}
