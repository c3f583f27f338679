//go:build linux || darwin

package trustfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/ours"
)

// Another user plants a link in a directory both can write, pointing at the victim's own
// settings: the write must not go where the link points.
func TestResolveForWriteRefusesAnotherUsersLink(t *testing.T) {
	home := t.TempDir()
	victim := filepath.Join(home, ".claude")
	if err := os.Mkdir(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	shared := testkit.SharedDir(t, os.ModeSticky|0o777) // sticky: only the link's owner decides
	testkit.RunAsOtherUser(t, "ln", "-s", victim, filepath.Join(shared, ".claude"))
	_, _, err := ResolveForWrite(filepath.Join(shared, ".claude", "settings.json"))
	refused(t, err, filepath.Join(shared, ".claude"), "symbolic link that belongs to another user")
}

// A directory others may write (not sticky) is refused even when everything in it is ours:
// another user could swap what is in it between the check and the write.
func TestResolveForWriteRefusesADirectoryOthersCanWrite(t *testing.T) {
	shared := testkit.SharedDir(t, 0o777)
	_, _, err := ResolveForWrite(filepath.Join(shared, ".mcp.json"))
	refused(t, err, shared, "writable by other users")
	if te := err.(*Error); te.Fix != "use a directory only you can write; or, if nobody else needs to write in this one of yours: chmod go-w "+shared {
		t.Errorf("fix %q", te.Fix)
	}
}

// A directory owned by another user is refused, whatever its mode.
func TestResolveForWriteRefusesAnotherUsersDirectory(t *testing.T) {
	shared := testkit.SharedDir(t, os.ModeSticky|0o777)
	theirs := filepath.Join(shared, "project")
	testkit.RunAsOtherUser(t, "mkdir", "-m", "755", theirs)
	_, _, err := ResolveForWrite(filepath.Join(theirs, ".mcp.json"))
	refused(t, err, theirs, "directory that belongs to another user")
	if te := err.(*Error); te.Fix != "use a path that only you (and root) own" {
		t.Errorf("fix %q: must not tell anyone to chmod another user's directory", te.Fix)
	}
}

// A dotfile manager's link of our own, in a directory only we write, is followed; missing
// directories at the end are counted.
func TestResolveForWriteFollowsOurOwnLink(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dotfiles", "codex")
	if err := os.MkdirAll(dots, 0o700); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dots, "config.toml")
	if err := os.WriteFile(real, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dotfiles/codex/config.toml", filepath.Join(home, ".codex", "config.toml")); err != nil {
		t.Fatal(err)
	}
	got, missing, err := ResolveForWrite(filepath.Join(home, ".codex", "config.toml"))
	if err != nil || got != real || missing != 0 {
		t.Fatalf("got %q %d %v, want %q", got, missing, err, real)
	}
	got, missing, err = ResolveForWrite(filepath.Join(home, ".cursor", "sub", "mcp.json"))
	if err != nil || got != filepath.Join(home, ".cursor", "sub", "mcp.json") || missing != 3 {
		t.Fatalf("missing tail: got %q %d %v", got, missing, err)
	}
}

// A file another user owns, a file others may write, and a FIFO are refused.
func TestResolveForWriteChecksTheFileItself(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(f, []byte("{}"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, 0o666); err != nil {
		t.Fatal(err)
	}
	_, _, err := ResolveForWrite(f)
	refused(t, err, f, "chmod go-w "+f)
	fifo := filepath.Join(dir, "fifo")
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Fatal(err)
	}
	_, _, err = ResolveForWrite(fifo)
	refused(t, err, fifo, "a FIFO")
}

// Group write by the owner's private group (a umask of 002 on Debian and Ubuntu) is no one
// else's; by a shared group it is. (The rule itself, /etc/group's members included, is
// tested in package ours.)
func TestPrivateGroupMayWrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	if err := os.Chown(dir, -1, uid); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ours.File(fi, false) != ours.Trusted {
		t.Skipf("uid %d has no private group", uid)
	}
	if err := Check(dir, fi, false); err != nil {
		t.Fatalf("own private group: %v", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(dir, -1, 65534); err != nil {
		t.Fatal(err)
	}
	if fi, err = os.Lstat(dir); err != nil {
		t.Fatal(err)
	}
	refused(t, Check(dir, fi, false), dir, "writable by other users")
}

// A secret readable by a group is refused even when that group is the owner's private one:
// its whole member list cannot be seen from here.
func TestSecretReadableByPrivateGroupRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("secret"), 0o640); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	if err := os.Chown(file, -1, uid); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(file, Secret, 16); err == nil {
		t.Fatal("a group-readable secret was read")
	}
}
