package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// bin is the resmongw binary under test, built once (with -race under `go test -race`, so the
// daemon's and the shim's own goroutines are checked too).
var bin string

func TestMain(m *testing.M) {
	testkit.RunHelper(rawClientHelper, rawClientMain)
	testkit.MainWithBinary(m, &bin, testkit.Race, nil)
}

// world is one user's environment: a home, a state home, and a short socket path.
type world struct{ *testkit.World }

func newWorld(t *testing.T) *world { return &world{testkit.NewWorld(t)} }

// servedWorld is the usual start of a test: a world whose daemon (our child) is listening,
// one simulated backend, and the test's context. The backend starts first so that it stops
// after the daemon (cleanups run last-first): the daemon's exit closes its connections, and
// a spare pooled connection that never carried a request would otherwise hold the backend's
// shutdown for its whole bound (net/http counts such a connection active for five seconds).
func servedWorld(t *testing.T) (*world, *resmonsim.Sim, context.Context) {
	t.Helper()
	w := newWorld(t)
	sim := startSim(t)
	w.startDaemon()
	return w, sim, testCtx(t)
}

// unservedWorld is a world with no daemon yet (a shim will autostart one, stopped when the
// test ends), one simulated backend, and the test's context.
func unservedWorld(t *testing.T) (*world, *resmonsim.Sim, context.Context) {
	t.Helper()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	return w, startSim(t), testCtx(t)
}

// reapDaemonOnCleanup stops whatever daemon holds the lock when the test ends; autostarted
// daemons are not our children.
func (w *world) reapDaemonOnCleanup() {
	w.T.Cleanup(func() {
		if pid := w.DaemonPID(); pid > 0 {
			_ = testkit.StopPID(pid, testkit.WaitLimit)
		}
	})
}

// daemonProc is a daemon the test started itself (`resmongw serve`).
type daemonProc struct {
	*testkit.Proc
	stderr *testkit.SyncBuffer
}

func (w *world) startDaemon(args ...string) *daemonProc {
	w.T.Helper()
	d := &daemonProc{stderr: &testkit.SyncBuffer{}}
	p, err := w.Serve(bin, nil, d.stderr, args...)
	if err != nil {
		w.T.Fatalf("daemon: %v\n%s", err, d.stderr)
	}
	d.Proc = p
	w.T.Cleanup(func() {
		d.stop(w.T)
		if strings.Contains(d.stderr.String(), "DATA RACE") {
			w.T.Errorf("the daemon reported a data race:\n%s", d.stderr)
		}
	})
	return d
}

// stop sends SIGTERM and waits (bounded) for the exit; it returns the exit error.
func (d *daemonProc) stop(t testing.TB) error {
	if d.Stop(testkit.WaitLimit) {
		t.Errorf("daemon ignored SIGTERM for %v", testkit.WaitLimit)
	}
	return d.Err()
}

// sim starts an in-process simulated backend in its own state directory.
func startSim(t *testing.T) *resmonsim.Sim {
	t.Helper()
	s, err := resmonsim.Start(resmonsim.Options{StateDir: filepath.Join(t.TempDir(), "resmon")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func simEnv(s *resmonsim.Sim) []string { return []string{"RESMON_STATE_DIR=" + s.StateDir()} }

// shimSession is a harness: a go-sdk client that launched `resmongw stdio`.
type shimSession struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
}

func (w *world) connect(ctx context.Context, protocol string, extraEnv ...string) *shimSession {
	w.T.Helper()
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.Env(extraEnv...)
	s := &shimSession{cmd: cmd, stderr: &testkit.SyncBuffer{}}
	cmd.Stderr = s.stderr
	// The person at this harness confirms every write the daemon asks about (--writes=ask, the
	// default), so writes take the confirmed path.
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}})
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit}, opts)
	if err != nil {
		w.T.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	s.cs = cs
	w.T.Cleanup(func() { _ = cs.Close() })
	return s
}

// toolResult is a decoded tools/call result: the reference's single text content.
type toolResult struct {
	isError bool
	payload map[string]any
}

func call(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) toolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("tools/call %s: %d content items", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call %s: content is %T", name, res.Content[0])
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(text.Text), &p); err != nil {
		t.Fatalf("tools/call %s: payload %q: %v", name, text.Text, err)
	}
	return toolResult{isError: res.IsError, payload: p}
}

// healthRuntimeID calls the health tool and returns the serving backend's runtime id.
func healthRuntimeID(ctx context.Context, t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	r := call(ctx, t, cs, "health", nil)
	if r.isError {
		t.Fatalf("health failed: %v", r.payload)
	}
	id, _ := r.payload["identity"].(map[string]any)
	rid, _ := id["runtime_id"].(string)
	if rid == "" {
		t.Fatalf("health without identity.runtime_id: %v", r.payload)
	}
	return rid
}

// runStatus runs `resmongw status` with extra args and env; it returns stdout and the exit code.
func (w *world) runStatus(ctx context.Context, extraEnv []string, args ...string) (string, int) {
	w.T.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"status"}, args...)...)
	cmd.Env = w.Env(extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	default:
		w.T.Fatalf("status: %v\n%s", err, errb.String())
		return "", -1
	}
}

func testCtx(t *testing.T) context.Context { return testkit.Context(t, 3*time.Minute) }
