package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resmongw/resmongw/ours"
)

// OtherUID is the second local user attack tests run as: nobody (uid and gid 65534). The
// test machine runs as root, so a test can start processes as nobody and give it files.
const OtherUID = 65534

// NeedRoot skips t unless it runs as root, which it needs to act as another user.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as a second user (uid 65534)")
	}
}

// OtherUserDir is a fresh directory owned by OtherUID (mode 0700) inside a world-traversable
// temporary directory, removed when the test ends.
func OtherUserDir(t testing.TB) string {
	t.Helper()
	NeedRoot(t)
	base, err := os.MkdirTemp("", "rgother")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "u")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, OtherUID, OtherUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// AsOtherUser makes cmd run as OtherUID with no supplementary groups.
func AsOtherUser(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: OtherUID, Gid: OtherUID, NoSetGroups: false, Groups: []uint32{}}
}

// RequireHardened fails t unless process pid (running as another user) cannot be read by that
// user's other processes and cannot dump core: its /proc/<pid>/status belongs to root (the
// kernel's sign of PR_SET_DUMPABLE 0) and its core limit is 0 0. what names the process.
func RequireHardened(t testing.TB, pid int, what string) {
	t.Helper()
	proc := "/proc/" + strconv.Itoa(pid)
	var st syscall.Stat_t
	if err := syscall.Stat(proc+"/status", &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 {
		t.Fatalf("%s/status belongs to uid %d: %s is dumpable (want it root's, as for PR_SET_DUMPABLE 0)", proc, st.Uid, what)
	}
	limits, err := os.ReadFile(proc + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(line, "Max core file size") {
			if f := strings.Fields(line); len(f) < 6 || f[4] != "0" || f[5] != "0" {
				t.Fatalf("%s: core limit %q, want 0 0", what, line)
			}
			return
		}
	}
	t.Fatalf("no core limit in %s/limits", proc)
}

// RunAsOtherUser runs name with args as OtherUID (skipping t where that cannot be done) and
// fails t if it fails: the attacker's side of an attack test.
func RunAsOtherUser(t testing.TB, name string, args ...string) {
	t.Helper()
	NeedRoot(t)
	cmd := exec.Command(name, args...)
	AsOtherUser(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid %d: %s %v: %v\n%s", OtherUID, name, args, err, out)
	}
}

// SharedDir is a fresh directory with mode (say 0777, or 01777 for a /tmp), reachable by every
// user: a team's shared project directory, where another user may plant names.
func SharedDir(t testing.TB, mode os.FileMode) string {
	t.Helper()
	top := t.TempDir()
	for _, p := range []string{top, filepath.Dir(top)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := filepath.Join(top, "shared")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// PrivateGroupDir is a fresh directory of ours, mode 0770, whose group is our own: writable by
// the owner's private group only (a umask of 002), which package ours counts as nobody else's.
// It skips the test where that group is not private here (another member in /etc/group).
func PrivateGroupDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "upg")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, -1, os.Getegid()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ours.File(fi, false) != ours.Trusted {
		t.Skipf("gid %d is not uid %d's private group here", os.Getegid(), os.Geteuid())
	}
	return dir
}
