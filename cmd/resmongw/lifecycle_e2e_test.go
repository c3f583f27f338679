//go:build linux

package main

import (
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

// serviceUser is a user with the service installed (unit file, fake systemctl) whose default
// socket is under a private /run/user: every command of theirs runs through runUser.Wrap.
type serviceUser struct {
	t       *testing.T
	env     []string
	socket  string
	callLog string
	runUser *testkit.RunUser
}

func newServiceUser(t *testing.T) *serviceUser {
	root, home := testkit.ShortTempDir(t), t.TempDir()
	fs := testkit.NewFakeService(t, root, home, bin)
	u := &serviceUser{t: t, socket: fs.Socket, callLog: fs.CallLog, runUser: fs.RunUser}
	u.env = append([]string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}, fs.Env...)
	t.Cleanup(func() {
		if pid := u.pid(); pid > 0 {
			_ = testkit.StopPID(pid, testkit.WaitLimit)
		}
	})
	return u
}

func (u *serviceUser) pid() int {
	pid, _ := testkit.ReadPIDFile(paths.LockFile(u.socket))
	return pid
}

func (u *serviceUser) run(args ...string) (string, int) {
	u.t.Helper()
	cmd := u.runUser.Wrap(exec.Command(bin, args...))
	cmd.Env = u.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		u.t.Fatal(err)
	}
	return string(out), 0
}

func (u *serviceUser) calls() string {
	b, _ := os.ReadFile(u.callLog)
	return string(b)
}

// With the service installed, start goes through the service manager; stop asks the daemon
// itself first (its sessions end instead of reconnecting) and then tells the service manager;
// restart brings the service's daemon back.
func TestServiceManagedLifecycle(t *testing.T) {
	t.Parallel() // after the demo, which no other test may overlap: it checks that no resmongw process is left
	u := newServiceUser(t)
	out, code := u.run("start")
	if code != 0 || !strings.Contains(u.calls(), "start --user resmongw") || u.pid() == 0 {
		t.Fatalf("start: exit %d\n%s\nsystemctl calls:\n%s", code, out, u.calls())
	}
	first := u.pid()

	out, code = u.run("restart")
	if code != 0 || !testkit.WaitGone(first, 30*time.Second) || u.pid() == 0 || u.pid() == first {
		t.Fatalf("restart: exit %d, old %d alive %v, now %d\n%s", code, first, testkit.Alive(first), u.pid(), out)
	}
	if strings.Count(u.calls(), "start --user resmongw") != 2 {
		t.Errorf("restart did not start the service again:\n%s", u.calls())
	}
	second := u.pid()

	out, code = u.run("stop")
	if code != 0 || !testkit.WaitGone(second, 30*time.Second) || !strings.Contains(out, "stopped the daemon (pid "+strconv.Itoa(second)) ||
		!strings.Contains(u.calls(), "stop --user resmongw") {
		t.Fatalf("stop: exit %d, daemon %d alive %v\n%s\nsystemctl calls:\n%s", code, second, testkit.Alive(second), out, u.calls())
	}
}

// install while an autostarted daemon serves the default socket: the unit goes in, that
// daemon hands over (it exits), and the service's daemon serves.
func TestInstallTakesOverFromAnAutostartedDaemon(t *testing.T) {
	t.Parallel() // after the demo, which no other test may overlap: it checks that no resmongw process is left
	u := newServiceUser(t)
	cmd := u.runUser.Wrap(exec.Command(bin, "serve", "--exit-when-idle", "10m"))
	cmd.Env = u.env
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(testkit.WaitLimit) })
	if err := testkit.WaitListening(u.socket, testkit.WaitLimit, p); err != nil {
		t.Fatal(err)
	}
	out, code := u.run("install")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s\nsystemctl calls:\n%s", code, out, u.calls())
	}
	// It has released the lock when install returns; its exit follows.
	select {
	case <-p.Done():
	case <-testkit.Context(t, 30*time.Second).Done():
		t.Fatalf("the autostarted daemon still runs after install\n%s", out)
	}
	if now := u.pid(); now == 0 || now == p.Pid() || !strings.Contains(u.calls(), "start --user resmongw") {
		t.Fatalf("after install: daemon %d (autostarted was %d)\n%s\nsystemctl calls:\n%s", now, p.Pid(), out, u.calls())
	}
}
