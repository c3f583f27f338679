//go:build linux

package shim_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// fakeDaemonHelper is a listener that stands in for another user's fake daemon: it accepts
// on the socket its argument names, prints "ready", and for every connection prints
// "conn <bytes received>" once the peer closes.
const fakeDaemonHelper = "fake-daemon"

func fakeDaemonMain(socket string) int {
	ln, err := net.Listen("unix", socket)
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	_ = os.Chmod(socket, 0o777) // anyone may connect: the attacker wants them to
	fmt.Println("ready")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		fmt.Println("conn", n)
	}
}

// asNobody is cmd run as the unprivileged user nobody; the test is skipped, saying why,
// when this machine cannot do that.
func asNobody(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run the fake daemon as another user (nobody)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv to run the fake daemon as another user")
	}
	return exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", name}, args...)...)
}

// fakeDaemon is the helper running as nobody, its stdout read line by line.
type fakeDaemon struct {
	lines chan string
}

func startFakeDaemonAsNobody(t *testing.T, socket string) *fakeDaemon {
	t.Helper()
	// The test binary, copied where nobody can run it (the build cache is root's own).
	dir := testkit.ShortTempDir(t)
	_ = os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "fake")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := asNobody(t, exe, "-test.run=^$")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "RESMONGW_TESTKIT_HELPER="+fakeDaemonHelper, "RESMONGW_TESTKIT_HELPER_ARG="+socket)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cmd.Process.Kill(); <-p.Done() })
	f := &fakeDaemon{lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
	}()
	if l := f.next(t); l != "ready" {
		t.Fatalf("fake daemon: %q", l)
	}
	return f
}

func (f *fakeDaemon) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-f.lines:
		if !ok {
			t.Fatal("the fake daemon exited")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the fake daemon said nothing for 30s")
	}
	return ""
}

// bytesReceived is every byte the fake daemon got from connections before now: the test
// connects once itself, sending one byte, and since connections are accepted in order, every
// line before its own "conn 1" is an earlier connection's (the shim's, if it connected).
func (f *fakeDaemon) bytesReceived(t *testing.T, socket string) (conns int, total int64) {
	t.Helper()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("probe connection: %v", err)
	}
	_, _ = c.Write([]byte{'x'})
	c.Close()
	var lines []string
	for {
		l := f.next(t)
		if l == "conn 1" {
			break
		}
		lines = append(lines, l)
	}
	for _, l := range lines {
		var n int64
		if _, err := fmt.Sscanf(l, "conn %d", &n); err != nil {
			t.Fatalf("fake daemon: %q", l)
		}
		conns++
		total += n
	}
	return conns, total
}

// runShimAt runs `resmongw stdio --socket socket` with an initialize request on stdin; it
// returns the exit code, stdout and stderr.
func runShimAt(t *testing.T, socket string) (int, string, string) {
	t.Helper()
	return runAt(t, testkit.InitializeRequest("1", "2025-06-18", "victim")+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"update_settings","arguments":{"group":"ai","settings":{"ai_effort":"low"}}}}`+"\n",
		"stdio", "--socket", socket)
}

// runAt runs resmongw with args, stdin and a victim's environment (a home and a state dir
// worth stealing); it returns the exit code, stdout and stderr.
func runAt(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"RESMON_STATE_DIR=" + filepath.Join(home, "secret-state"), "RESMONGW_NO_AUTOSTART=1"}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// untrustedSocket is one way a socket the shim could be pointed at may belong to another
// user. setup returns where the fake daemon binds and where the client is pointed (the
// fake's socket may be moved there once it listens); why is what the refusal must say.
type untrustedSocket struct {
	name  string
	setup func(t *testing.T) (bindAt, clientAt string)
	why   string
}

var untrustedSockets = []untrustedSocket{
	{"shared sticky directory", func(t *testing.T) (string, string) {
		dir := filepath.Join(testkit.ShortTempDir(t), "shared")
		mkdirMode(t, dir, 0o1777)
		return filepath.Join(dir, "mcp.sock"), filepath.Join(dir, "mcp.sock")
	}, "is writable by others (mode 1777)"},
	{"directory of another user", func(t *testing.T) (string, string) {
		dir := filepath.Join(testkit.ShortTempDir(t), "theirs")
		mkdirMode(t, dir, 0o700)
		chownNobody(t, dir)
		return filepath.Join(dir, "mcp.sock"), filepath.Join(dir, "mcp.sock")
	}, "belongs to uid 65534"},
	{"their socket in our private directory", func(t *testing.T) (string, string) {
		base := testkit.ShortTempDir(t)
		theirs := filepath.Join(base, "theirs")
		mkdirMode(t, theirs, 0o700)
		chownNobody(t, theirs)
		ours := filepath.Join(base, "ours")
		mkdirMode(t, ours, 0o700)
		return filepath.Join(theirs, "mcp.sock"), filepath.Join(ours, "mcp.sock")
	}, "it is served by uid 65534"},
}

// fakeDaemonAt starts another user's fake daemon for u and returns where a client finds it.
func fakeDaemonAt(t *testing.T, u untrustedSocket) (*fakeDaemon, string) {
	t.Helper()
	bindAt, clientAt := u.setup(t)
	_ = os.Chmod(filepath.Dir(filepath.Dir(bindAt)), 0o755) // nobody reaches its directory
	f := startFakeDaemonAsNobody(t, bindAt)
	if bindAt != clientAt {
		// Only root can move another user's socket into our directory; what matters is that
		// the file the client finds is served by them.
		if err := os.Rename(bindAt, clientAt); err != nil {
			t.Fatal(err)
		}
	}
	return f, clientAt
}

// Issue 10.4: a fake daemon run by another user where the shim is pointed (a shared
// directory, a directory of theirs, or their socket moved into a private directory of ours)
// receives 0 bytes (no preamble, no environment, no call, not even at the call's own try of
// the daemon), and the shim says why in one stderr line and answers the session itself
// (issue 25.4): the call, with why; the harness's hang-up is then a normal end (exit 0).
func TestShimRefusesAnotherUsersDaemon(t *testing.T) {
	for _, c := range untrustedSockets {
		t.Run(c.name, func(t *testing.T) {
			f, shimAt := fakeDaemonAt(t, c)
			code, stdout, stderr := runShimAt(t, shimAt)
			if code != 0 {
				t.Errorf("shim exit %d, want 0; stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result":`) ||
				!strings.HasPrefix(lines[1], `{"jsonrpc":"2.0","id":2,"result":`) || !strings.Contains(lines[1], c.why) ||
				!strings.Contains(lines[1], `"isError":true`) {
				t.Errorf("shim stdout %q, want initialize answered and the call refused saying %q", stdout, c.why)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.why) || !strings.Contains(stderr, "nothing was sent") {
				t.Errorf("shim stderr %q: want one line saying %q", stderr, c.why)
			}
			if conns, n := f.bytesReceived(t, shimAt); n != 0 {
				t.Errorf("the fake daemon received %d bytes over %d connections, want 0", n, conns)
			}
		})
	}
}

// The socket's other clients dial as the shim does (endpoint.Dial): status (whose preamble
// carries HOME and the state dir), stop and restart (a control preamble) send another user's
// fake daemon 0 bytes, exit 1 with one stderr line saying why, and restart starts nothing.
func TestEveryClientRefusesAnotherUsersDaemon(t *testing.T) {
	clients := [][]string{{"status"}, {"status", "--json"}, {"status", "--verbose"}, {"stop"}, {"restart"}}
	for _, c := range untrustedSockets {
		t.Run(c.name, func(t *testing.T) {
			f, at := fakeDaemonAt(t, c)
			for _, args := range clients {
				code, stdout, stderr := runAt(t, "", append(args, "--socket", at)...)
				if code != 1 {
					t.Errorf("%v: exit %d, want 1; stdout %q stderr %q", args, code, stdout, stderr)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.why) || !strings.Contains(stderr, "nothing was sent") {
					t.Errorf("%v: stderr %q, want one line saying %q", args, stderr, c.why)
				}
				if strings.Contains(stdout, "started the daemon") {
					t.Errorf("%v started a daemon: %q", args, stdout)
				}
			}
			if conns, n := f.bytesReceived(t, at); n != 0 {
				t.Errorf("the fake daemon received %d bytes over %d connections, want 0", n, conns)
			}
		})
	}
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m := mode.Perm()
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if err := os.Chmod(dir, m); err != nil {
		t.Fatal(err)
	}
}

func chownNobody(t *testing.T, path string) {
	t.Helper()
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Skipf("cannot hand %s to nobody: %v", path, err)
	}
}
