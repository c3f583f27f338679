package daemon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
)

// serveOnce runs `resmongw serve --socket socket` expecting it to refuse, and returns its
// stderr.
func (w *world) serveOnce(t *testing.T, socket string) string {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), bin, "serve", "--socket", socket)
	cmd.Env = w.Env()
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("a daemon on %s started; want it refused", socket)
	}
	return stderr.String()
}

// Issue 25.6e: the daemon's lock belongs to its socket, not to the socket's directory. Two
// sockets in one directory have a daemon each, both serving; a second daemon on either socket
// is refused, naming the one that holds it. A daemon of an older version (which locked the
// whole directory) keeps a new one out of that directory, as it expects.
func TestLockBelongsToTheSocket(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := w.startDaemon()
	other := &world{testkit.NewWorld(t)}
	other.Socket = filepath.Join(filepath.Dir(w.Socket), "other.sock")
	second := other.startDaemon()
	if first.Pid() == second.Pid() || sessionwire.LockHolder(w.Socket) != first.Pid() || sessionwire.LockHolder(other.Socket) != second.Pid() {
		t.Fatalf("lock holders %d and %d, want the daemons %d and %d",
			sessionwire.LockHolder(w.Socket), sessionwire.LockHolder(other.Socket), first.Pid(), second.Pid())
	}
	for _, ww := range []*world{w, other} {
		if out, code := ww.runStatus(testCtx(t), nil, "--json"); code == 3 || decodeStatus(t, out).Daemon.Socket != ww.Socket {
			t.Fatalf("status on %s: exit %d\n%s", ww.Socket, code, out)
		}
	}
	for socket, holder := range map[string]int{w.Socket: first.Pid(), other.Socket: second.Pid()} {
		if msg := w.serveOnce(t, socket); !strings.Contains(msg, "already running (pid "+strconv.Itoa(holder)+"; lock "+paths.LockFile(socket)) {
			t.Errorf("a second daemon on %s said %q; want it refused naming pid %d", socket, msg, holder)
		}
	}

	// An older daemon holds its directory's lock exclusively, with its pid in it.
	old := filepath.Join(testkit.ShortTempDir(t), "mcp.sock")
	f, err := os.OpenFile(paths.LegacyLockFile(old), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		t.Fatal(err)
	}
	if msg := w.serveOnce(t, old); !strings.Contains(msg, "already running (pid "+strconv.Itoa(os.Getpid())+"; lock "+paths.LegacyLockFile(old)) {
		t.Errorf("a daemon beside an older one said %q; want it refused naming the older one", msg)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("the refused daemon made a socket at %s: %v", old, err)
	}
}
