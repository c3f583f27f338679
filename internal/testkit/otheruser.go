package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
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
