package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// B6: a removed socket file is re-created by the daemon, which still holds the lock.
func TestCheckSocketRelistensAfterRemoval(t *testing.T) {
	d, socket, logs := servingTestDaemon(t)
	c0, _ := dialSession(t, socket)
	c0.Close()

	d.checkSocket() // unchanged: nothing to do
	if logs.FilterMessageSnippet("removed or replaced").Len() != 0 {
		t.Fatal("re-listened on an intact socket")
	}
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	d.checkSocket()
	c, _ := dialSession(t, socket)
	c.Close()
	if logs.FilterMessageSnippet("removed or replaced").Len() != 1 {
		t.Errorf("re-listen not logged: %v", logs.All())
	}
	d.checkSocket() // the new file is ours now
	if logs.FilterMessageSnippet("removed or replaced").Len() != 1 {
		t.Error("re-listened again on the re-created socket")
	}
}

// A removed socket is re-created on the directory's file event, not at the periodic check
// (an hour here): an idle daemon is never woken to look (issue 23 item 5). macOS's kqueue does
// not report a removed socket, which the periodic check covers there.
func TestKeepSocketRelistensOnTheRemovalEvent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only inotify reports a removed socket file")
	}
	d, socket, logs := servingTestDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	kept := make(chan struct{})
	sw := d.watchSocket()
	if sw.Changed() == nil {
		sw.Close()
		t.Skip("no file events: this user's inotify instances are used up (the daemon then checks periodically)")
	}
	go func() { d.keepSocket(ctx, time.Hour, sw); close(kept) }()
	t.Cleanup(func() { cancel(); <-kept })
	// Written beside the socket like the log: an event that must not make it re-listen.
	if err := os.WriteFile(filepath.Join(filepath.Dir(socket), "s.log"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, func() bool { return logs.FilterMessageSnippet("listening again").Len() == 1 },
		"the re-listen after the removal event")
	c, _ := dialSession(t, socket)
	c.Close()
	if n := logs.FilterMessageSnippet("removed or replaced").Len(); n != 1 {
		t.Errorf("re-listened %d times, want once: %v", n, logs.All())
	}
}

// B6: the socket is re-created only while our lock file is still the one we locked, so two
// daemons can never take the path from each other in turns.
func TestCheckSocketNeedsOurLock(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	defer d.shutdown(stopRestart)
	dir := t.TempDir()
	lock := filepath.Join(dir, "daemon.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(lock)
	d.lockPath, d.lockFile = lock, fi
	// Replaced by another file (made while the old one still exists, so never its inode).
	if err := os.WriteFile(lock+".new", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock+".new", lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	d.checkSocket()
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("re-created the socket without holding the lock file: %v", err)
	}
	if logs.FilterMessageSnippet("so is our lock file").Len() != 1 {
		t.Errorf("not logged: %v", logs.All())
	}
}

// A socket directory the daemon makes is private (0700, parents too).
func TestPrivateDirMakesMissingDirectoriesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := privateDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v (%v), want 0700", d, fi.Mode().Perm(), err)
		}
	}
}

// A directory that was already there is checked and never changed: --socket ~/x.sock, /tmp/x.sock
// or /x once made the daemon chmod the home directory, /tmp or / to 0700, locking every
// other user and program out of them.
func TestPrivateDirNeverChangesAnExistingDirectory(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		name        string
		mode        os.FileMode
		sharedGroup bool // the group is nobody's (65534), not the owner's private one
		refuse      bool
	}{
		{"readable by others, like a home directory", 0o755, false, false},
		{"writable by a shared group", 0o770, true, true},
		{"world-writable, like /tmp without its sticky bit", 0o777, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, fmt.Sprintf("%04o", tc.mode))
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.sharedGroup {
				testkit.NeedRoot(t)
				if err := os.Chown(dir, -1, testkit.OtherUID); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			err := privateDir(dir)
			if tc.refuse != (err != nil) {
				t.Fatalf("privateDir(%04o) = %v, want refused %v", tc.mode, err, tc.refuse)
			}
			if err != nil && !strings.Contains(err.Error(), "chmod 700 "+dir) {
				t.Errorf("the refusal does not say how to fix it: %v", err)
			}
			if fi, _ := os.Stat(dir); fi.Mode().Perm() != tc.mode {
				t.Fatalf("the directory's mode went %04o -> %04o", tc.mode, fi.Mode().Perm())
			}
		})
	}
}

// The socket's directory follows the one rule (package ours): group write by the owner's
// private group (a umask of 002) is no one else's, so such a directory is used as it is.
func TestPrivateDirAcceptsTheOwnersPrivateGroup(t *testing.T) {
	dir := testkit.PrivateGroupDir(t)
	if err := privateDir(dir); err != nil {
		t.Fatalf("a directory only the owner's private group may write: %v", err)
	}
}

// The socket directory must be real and ours: not a link (even one of ours), and nothing
// another user made. The attacker is nobody, for real: in a directory everyone shares
// (sticky, like /tmp) it makes the directory the socket is to go in, and a link to a
// directory of ours; the daemon puts its socket in neither.
func TestPrivateDirRefusesSymlinksAndOtherUsers(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(link); err == nil || !strings.Contains(err.Error(), "not a directory (a symlink or a file)") {
		t.Fatalf("a symlinked socket directory: %v, want refused", err)
	}

	shared := testkit.SharedDir(t, os.ModeSticky|0o777)
	theirs, planted := filepath.Join(shared, "resmongw"), filepath.Join(shared, "link")
	testkit.RunAsOtherUser(t, "sh", "-c", `set -e; mkdir -m 700 "$1"; ln -s "$3" "$2"`, "sh", theirs, planted, real)
	if err := privateDir(theirs); err == nil || !strings.Contains(err.Error(), "owned by another user") {
		t.Fatalf("a directory nobody made: %v, want refused as another user's", err)
	}
	if err := privateDir(planted); err == nil || !strings.Contains(err.Error(), "not a directory (a symlink or a file)") {
		t.Fatalf("nobody's link to a directory of ours: %v, want refused", err)
	}
	for _, d := range []string{theirs, real} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("%s changed: %d entries", d, len(entries))
		}
	}
}

func TestLockIsExclusiveAndNamesHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sock")
	l, err := acquireLock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = acquireLock(p)
	var ar *errAlreadyRunning
	if !errors.As(err, &ar) || ar.pid != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
	l.Release()
	l2, err := acquireLock(p)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}
