//go:build linux || darwin

package discovery

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// untrusted checks that a pass refused with untrusted_file, naming want in its message, and
// that the backend saw no request at all (no token sent anywhere).
func untrusted(t *testing.T, name string, f *fakeBackend, tg Target, want ...string) {
	t.Helper()
	b, u, _, _ := Discover(context.Background(), tg, nil)
	if b != nil || u == nil || u.Reason != ReasonUntrustedFile {
		t.Fatalf("%s: got %+v %+v, want untrusted_file", name, b, u)
	}
	for _, w := range want {
		if !strings.Contains(u.Message, w) {
			t.Fatalf("%s: message %q lacks %q", name, u.Message, w)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%s: %d requests reached the backend", name, n)
	}
	assertNoSecret(t, f.Token(), u)
}

// Issue 10.1: a state directory others can write, a token file others can read, a
// symlinked token file: refused before a byte is read or sent, with the path, what was
// found and the fix.
func TestDiscoverRefusesUntrustedStateFiles(t *testing.T) {
	f := newFakeBackend(t)
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	tg := stateTarget(dir)
	if b, u, _, _ := Discover(context.Background(), tg, nil); b == nil {
		t.Fatalf("a normal 0700/0600 install must verify: %+v", u)
	}
	f.set(func(f *fakeBackend) { f.seen = nil })

	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "state dir 0777", f, tg, dir, "writable by other users", "mode 0777", "chmod 700 "+dir)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}

	tf := TokenFile(dir, f.Port)
	if err := os.Chmod(tf, 0o644); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "token file 0644", f, tg, tf, "readable by other users", "mode 0644", "chmod 600 "+tf)

	// The attack of issue 10.1: the token file a symlink to the victim's real token.
	real := filepath.Join(t.TempDir(), "real-token")
	if err := os.WriteFile(real, []byte(f.Token()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tf); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, tf); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "symlinked token file", f, tg, tf, "symbolic link")

	// A port file others can write chooses where the token goes.
	if err := os.Remove(tf); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	pf := filepath.Join(dir, PortFileName)
	if err := os.Chmod(pf, 0o666); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "port file 0666", f, tg, pf, "writable by other users", "chmod 600 "+pf)
}

// Issue 10.2: a FIFO where the port file or a token file belongs is refused at once; a
// blocking open would wait for a writer forever. The test's own deadline bounds the pass.
func TestDiscoverRefusesFIFOWithoutBlocking(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	pf := filepath.Join(dir, PortFileName)
	tf := TokenFile(dir, f.Port)
	for _, path := range []string{pf, tf} {
		writeInstance(t, dir, f)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			untrusted(t, filepath.Base(path)+" is a FIFO", f, stateTarget(dir), path, "a FIFO")
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("discovery blocked on a FIFO at %s", path)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// Owned by another user (uid 65534): refused even though the mode is private.
func TestDiscoverRefusesFilesOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to uid 65534")
	}
	f := newFakeBackend(t)
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	tf := TokenFile(dir, f.Port)
	if err := os.Chown(tf, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "token file of uid 65534", f, stateTarget(dir), tf, "belongs to another user", "65534")
	if err := os.Chown(tf, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	untrusted(t, "state dir of uid 65534", f, stateTarget(dir), dir, "belongs to another user")
}
