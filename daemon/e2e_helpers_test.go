package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/proxy/backendsim"
)

// bin is the resmongw binary under test, built once. Its directory is world-readable so a
// helper process running as another user can execute it.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rgwbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "resmongw")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/resmongw")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building resmongw:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is one user's environment: a home, a state home, and a short socket path.
type world struct {
	t         *testing.T
	home      string
	stateHome string
	socket    string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	home := t.TempDir()
	// sun_path is short, and t.TempDir paths carry the test name: use a short temp dir.
	short, err := os.MkdirTemp("", "rg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	return &world{t: t, home: home, stateHome: filepath.Join(home, "state"), socket: filepath.Join(short, "run", "mcp.sock")}
}

// env is a clean environment: nothing leaks in from the test process.
func (w *world) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.home,
		"XDG_STATE_HOME=" + w.stateHome,
		"RESMONGW_SOCKET=" + w.socket,
	}, extra...)
}

func (w *world) logFile() string  { return filepath.Join(w.stateHome, "resmongw", "resmongw.log") }
func (w *world) lockFile() string { return filepath.Join(filepath.Dir(w.socket), "daemon.lock") }

// daemonPID reads the pid the running daemon wrote into its lock file.
func (w *world) daemonPID() int {
	b, err := os.ReadFile(w.lockFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// reapDaemonOnCleanup stops whatever daemon holds the lock when the test ends; autostarted
// daemons are not our children.
func (w *world) reapDaemonOnCleanup() {
	w.t.Cleanup(func() {
		if pid := w.daemonPID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			if !waitGone(pid, 10*time.Second) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, 5*time.Second)
			}
		}
	})
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !alive(pid)
}

// daemonProc is a daemon the test started itself (`resmongw serve`).
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

func (w *world) startDaemon(args ...string) *daemonProc {
	w.t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--socket", w.socket}, args...)...)
	cmd.Env = w.env()
	d := &daemonProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	w.t.Cleanup(func() {
		d.stop(w.t)
		if strings.Contains(d.stderr.String(), "DATA RACE") {
			w.t.Errorf("the daemon reported a data race:\n%s", d.stderr)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", w.socket)
		if err == nil {
			c.Close()
			return d
		}
		select {
		case <-d.done:
			w.t.Fatalf("daemon exited early: %v\n%s", d.err, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("daemon did not listen: %v\n%s", err, d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits (bounded) for the exit; it returns the exit error.
func (d *daemonProc) stop(t *testing.T) error {
	select {
	case <-d.done:
		return d.err
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return d.err
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		t.Errorf("daemon ignored SIGTERM for 15s")
		return d.err
	}
}

// sim starts an in-process simulated backend in its own state directory.
func startSim(t *testing.T) *backendsim.Sim {
	t.Helper()
	s, err := backendsim.Start(backendsim.Options{StateDir: filepath.Join(t.TempDir(), "resmon")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func simEnv(s *backendsim.Sim) []string { return []string{"RESMON_STATE_DIR=" + s.StateDir()} }

// shimSession is a harness: a go-sdk client that launched `resmongw stdio`.
type shimSession struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
}

func (w *world) connect(ctx context.Context, protocol string, extraEnv ...string) *shimSession {
	w.t.Helper()
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.env(extraEnv...)
	s := &shimSession{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, opts)
	if err != nil {
		w.t.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	s.cs = cs
	w.t.Cleanup(func() { _ = cs.Close() })
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
	w.t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"status"}, args...)...)
	cmd.Env = w.env(extraEnv...)
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
		w.t.Fatalf("status: %v\n%s", err, errb.String())
		return "", -1
	}
}

// syncBuffer is a bytes.Buffer safe for a process's writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
