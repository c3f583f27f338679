//go:build linux

package shim_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/paths"
)

// bin is resmongw, built once for these tests.
var bin string

func TestMain(m *testing.M) {
	testkit.RunHelper(fakeDaemonHelper, fakeDaemonMain)
	testkit.MainWithBinary(m, &bin, false, nil)
}

// fakeSystemctl records its arguments, one call a line; in "start" mode it starts the daemon
// the way the unit would (`resmongw serve`, default socket) and succeeds, otherwise it fails.
const fakeSystemctl = `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_SYSTEMCTL_LOG"
if [ "$FAKE_SYSTEMCTL_MODE" = start ]; then
	"$RESMONGW_TEST_BIN" serve </dev/null >/dev/null 2>&1 &
	exit 0
fi
echo "Failed to start resmongw.service: Unit resmongw.service not loaded." >&2
exit 1
`

// serviceWorld is one user: a home (with or without the unit file), a runtime dir for the
// default socket, and a PATH whose systemctl is fake.
type serviceWorld struct {
	t       *testing.T
	home    string
	runtime string
	callLog string
	env     []string
	runUser *testkit.RunUser // every command runs through its Wrap
}

func newServiceWorld(t *testing.T, unitInstalled bool, mode string) *serviceWorld {
	t.Helper()
	home := t.TempDir()
	// The default socket follows the uid, not XDG_RUNTIME_DIR: the shim's processes see a
	// private /run/user with a logind-style runtime directory in it.
	ru := testkit.NewRunUser(t, testkit.ShortTempDir(t))
	bindir := filepath.Join(home, "bin")
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bindir, "systemctl"), []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	if unitInstalled {
		unitDir := filepath.Join(home, ".config", "systemd", "user")
		if err := os.MkdirAll(unitDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(unitDir, "resmongw.service"), []byte("[Service]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &serviceWorld{t: t, home: home, runtime: ru.Runtime, callLog: filepath.Join(home, "systemctl.log"), runUser: ru}
	w.env = []string{
		"PATH=" + bindir + ":" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_RUNTIME_DIR=/run/user/" + strconv.Itoa(os.Getuid()),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"FAKE_SYSTEMCTL_LOG=" + w.callLog,
		"FAKE_SYSTEMCTL_MODE=" + mode,
		"RESMONGW_TEST_BIN=" + bin,
	}
	t.Cleanup(w.stopDaemon)
	return w
}

func (w *serviceWorld) lockFile() string {
	return paths.LockFile(filepath.Join(w.runtime, "resmongw", "mcp.sock"))
}

// daemonArgs is the argv of the daemon holding the lock.
func (w *serviceWorld) daemonArgs() []string {
	w.t.Helper()
	b, err := os.ReadFile(w.lockFile())
	if err != nil {
		w.t.Fatalf("no daemon lock: %v", err)
	}
	cmdline, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/cmdline")
	if err != nil {
		w.t.Fatalf("daemon process: %v", err)
	}
	return strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
}

func (w *serviceWorld) stopDaemon() { stopDaemonOf(w.lockFile()) }

// stopDaemonOf stops the daemon whose pid its lock file holds, if any.
func stopDaemonOf(lock string) {
	if pid, err := testkit.ReadPIDFile(lock); err == nil {
		_ = testkit.StopPID(pid, 5*time.Second)
	}
}

func (w *serviceWorld) systemctlCalls() []string {
	b, err := os.ReadFile(w.callLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// runShim pipes an initialize request through `resmongw stdio` (no daemon running yet) and
// checks it was answered.
func (w *serviceWorld) runShim(extraEnv ...string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := w.runUser.Wrap(exec.CommandContext(ctx, bin, "stdio"))
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Stdin = strings.NewReader(testkit.InitializeRequest(`"boot"`, "2025-06-18", "t") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("shim: %v; stderr %q", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"id":"boot","result"`) {
		w.t.Fatalf("no initialize answer: %q (stderr %q)", stdout.String(), stderr.String())
	}
}

func hasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

// With the unit installed, the shim asks systemd to start the service, and the daemon that
// serves it is the service's (`resmongw serve` on the default socket), not one it spawned.
func TestAutostartStartsInstalledService(t *testing.T) {
	w := newServiceWorld(t, true, "start")
	w.runShim()
	if calls := w.systemctlCalls(); len(calls) != 1 || calls[0] != "--user start resmongw.service" {
		t.Fatalf("systemctl calls %q", calls)
	}
	if args := w.daemonArgs(); hasArg(args, "--socket") {
		t.Fatalf("the daemon was spawned by the shim (%q), not started as the service", args)
	}
	// The next shim finds the service's daemon running: systemctl is not called again.
	w.runShim()
	if calls := w.systemctlCalls(); len(calls) != 1 {
		t.Fatalf("systemctl called with the daemon running: %q", calls)
	}
}

// The service fails to start: the shim falls back to spawning the daemon itself.
func TestAutostartFallsBackWhenServiceFails(t *testing.T) {
	w := newServiceWorld(t, true, "fail")
	w.runShim()
	if calls := w.systemctlCalls(); len(calls) != 1 || calls[0] != "--user start resmongw.service" {
		t.Fatalf("systemctl calls %q", calls)
	}
	if args := w.daemonArgs(); !hasArg(args, "--socket") {
		t.Fatalf("daemon %q: want the shim's own spawn (serve --socket …)", args)
	}
}

// No unit installed, or an explicit socket (a private daemon): systemctl is never asked.
func TestAutostartWithoutServiceSpawnsDirectly(t *testing.T) {
	w := newServiceWorld(t, false, "start")
	w.runShim()
	if calls := w.systemctlCalls(); calls != nil {
		t.Fatalf("systemctl called without an installed unit: %q", calls)
	}
	if args := w.daemonArgs(); !hasArg(args, "--socket") {
		t.Fatalf("daemon %q: want the shim's own spawn", args)
	}

	p := newServiceWorld(t, true, "start")
	private := filepath.Join(p.runtime, "private", "p.sock")
	t.Cleanup(func() { stopDaemonOf(paths.LockFile(private)) })
	p.runShim("RESMONGW_SOCKET=" + private)
	if calls := p.systemctlCalls(); calls != nil {
		t.Fatalf("systemctl called for an explicit socket: %q", calls)
	}
	if _, err := os.Stat(private); err != nil {
		t.Fatalf("no private daemon on %s: %v", private, err)
	}
}
