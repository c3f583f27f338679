//go:build linux || darwin

package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.3: the log was checked, then opened again by name (lumberjack, at start and at
// every rotation), so whatever the path named later was written. Now the directory is
// opened once and every open, create and rename is relative to it. The attack: once the
// daemon's log is open, its directory's path is made to name another user's directory, in
// which that user (nobody, for real) planted a symlink at the log's name and at its backups'
// names. Rotations still happen in the directory that was checked, nothing is written
// through the links, and nothing is created in the other user's directory.
func TestLogStaysInTheDirectoryThatWasChecked(t *testing.T) {
	testkit.NeedRoot(t)
	base := t.TempDir()
	logDir := filepath.Join(base, "logs")
	path := filepath.Join(logDir, "resmongw.log")
	lf, err := openLogFile(path, 256, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if _, err := lf.Write([]byte("checked-1\n")); err != nil {
		t.Fatal(err)
	}

	other := testkit.OtherUserDir(t)
	victim := filepath.Join(other, "victim")
	plant := exec.Command("sh", "-c", `set -e; cd "$1"; echo keep > victim; mkdir -m 0755 logs
for n in resmongw.log resmongw.log.1 resmongw.log.2 resmongw.log.3; do ln -s "$1/victim" "logs/$n"; done`, "sh", other)
	testkit.AsOtherUser(plant)
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("nobody planting links: %v\n%s", err, out)
	}
	moved := filepath.Join(base, "moved")
	if err := os.Rename(logDir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "logs"), logDir); err != nil {
		t.Fatal(err)
	}

	line := []byte(strings.Repeat("x", 100) + "\n")
	for i := 0; i < 12; i++ { // several rotations at 256 bytes
		if _, err := lf.Write(line); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Fatalf("written through a planted link: victim holds %q", b)
	}
	entries, _ := os.ReadDir(filepath.Join(other, "logs"))
	if len(entries) != 4 {
		t.Fatalf("the other user's directory changed: %d entries", len(entries))
	}
	for _, n := range []string{"resmongw.log", "resmongw.log.1", "resmongw.log.2"} {
		fi, err := os.Lstat(filepath.Join(moved, n))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Size() > 256 {
			t.Fatalf("%s in the checked directory: %v %v", n, fi, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(moved, "resmongw.log.3")); err == nil {
		t.Fatal("more backups than asked for")
	}
}

// The log's own file is held to the one rule (package ours) on the opened descriptor. The
// attack, by nobody for real: while the log's directory was open to everyone, nobody planted
// a log file there and keeps it writable; the directory is then made ours alone again, but
// the planted file stays. The daemon refuses the open directory, then the planted file, and
// writes nothing into either.
func TestLogPlantedByAnotherUserIsRefused(t *testing.T) {
	dir := testkit.SharedDir(t, 0o777)
	path := filepath.Join(dir, "resmongw.log")
	testkit.RunAsOtherUser(t, "sh", "-c", `echo planted > "$1"; chmod 666 "$1"`, "sh", path)
	if _, err := openLogFile(path, 1<<20, 1); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a log directory everyone may write: %v, want refused", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lf, err := openLogFile(path, 1<<20, 1)
	if err == nil {
		lf.Close()
		t.Fatal("the log file nobody planted was opened")
	}
	if !strings.Contains(err.Error(), "belongs to uid 65534, not to you") || !strings.Contains(err.Error(), "--log-file a path of your own") {
		t.Fatalf("refusal %q: want it to name the owner and the fix", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "planted\n" {
		t.Fatalf("the planted file was changed: %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o666 {
		t.Fatalf("the planted file's mode was changed to %04o", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d entries in the log directory, want only the planted file", len(entries))
	}
}
