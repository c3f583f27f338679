//go:build linux || darwin

package trustfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// private makes a 0700 directory holding a 0600 file named "f" with content "x".
func private(t *testing.T) (dir, file string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func refused(t *testing.T, err error, path, want string) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a refusal of %s", err, path)
	}
	if te.Path != path || !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q, want path %s and %q", err, path, want)
	}
}

func TestNormalInstallReads(t *testing.T) {
	dir, file := private(t)
	for _, k := range []Kind{Public, Secret} {
		b, err := ReadFile(file, k, 16)
		if err != nil || string(b) != "x" {
			t.Fatalf("kind %d: %q %v", k, b, err)
		}
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(file, Public, 16); err != nil {
		t.Fatalf("a 0644 port file is fine: %v", err)
	}
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestMissingIsNotExist(t *testing.T) {
	dir, _ := private(t)
	if _, err := ReadFile(filepath.Join(dir, "nope"), Secret, 16); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "nodir", "f"), Secret, 16); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing directory: %v", err)
	}
}

func TestGroupOrOtherWritableDirectoryRefused(t *testing.T) {
	dir, file := private(t)
	if os.Geteuid() == 0 { // a shared group, not root's own private one (which may write)
		if err := os.Chown(dir, -1, 65534); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []os.FileMode{0o777, 0o770, os.ModeSticky | 0o777} {
		if mode == 0o770 && os.Geteuid() != 0 {
			continue // cannot give the directory a shared group
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(file, Public, 16)
		if mode&os.ModeSticky != 0 { // shared like /tmp: never told to chmod it
			refused(t, err, dir, "point RESMON_STATE_DIR at your resmon's state directory")
			if strings.Contains(err.Error(), "chmod") {
				t.Fatalf("advises a chmod of a shared directory: %v", err)
			}
		} else {
			refused(t, err, dir, "chmod 700 "+dir)
		}
		if !strings.Contains(err.Error(), "writable by other users") {
			t.Fatalf("%v", err)
		}
	}
}

func TestSecretReadableByOthersRefused(t *testing.T) {
	_, file := private(t)
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(file, Secret, 16)
	refused(t, err, file, "mode 0644")
	if !strings.Contains(err.Error(), "chmod 600 "+file) {
		t.Fatalf("no fix in %v", err)
	}
}

func TestSymlinkNeverFollowed(t *testing.T) {
	dir, file := private(t)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(link, Secret, 16)
	refused(t, err, link, "symbolic link")
}

// A FIFO is refused at once: with no writer, a blocking open would wait forever.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	dir, _ := private(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(fifo, Public, 16)
	refused(t, err, fifo, "a FIFO")
}

func TestAncestorWritableByOthersRefusedUnlessSticky(t *testing.T) {
	top := t.TempDir()
	mid := filepath.Join(top, "shared")
	dir := filepath.Join(mid, "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mid, 0o777); err != nil {
		t.Fatal(err)
	}
	refused(t, CheckDir(dir), mid, "chmod go-w "+mid)
	if err := os.Chmod(mid, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir); err != nil {
		t.Fatalf("under a sticky directory: %v", err)
	}
}

func TestOwnedByAnotherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user (uid 65534)")
	}
	dir, file := private(t)
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	refused(t, func() error { _, err := ReadFile(file, Public, 16); return err }(), file, "belongs to another user")
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	refused(t, CheckDir(dir), dir, "belongs to another user")
}

func TestLargerThanMaxRefused(t *testing.T) {
	_, file := private(t)
	if err := os.WriteFile(file, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(file, Secret, 1024); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("%v", err)
	}
}

// The fix is pasteable: a path with spaces (macOS's "Application Support") or a quote is
// shell-quoted.
func TestFixQuotesThePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Application Support", "it's")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	want := `chmod 700 '` + strings.ReplaceAll(dir, "'", `'\''`) + `'`
	if err := CheckDir(dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want the fix %s", err, want)
	}
}
