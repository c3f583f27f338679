package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The binary under test is kept in the temporary directory, which others share; a
// directory there is used only if it passes the one rule (package ours). The attack, by
// nobody for real: it makes the cache's directory first, in a sticky shared TMPDIR, to have
// its own binary run as ours. The cache refuses it; one of ours others may write is refused
// too; a fresh one is made and kept ours.
func TestBinaryCacheRefusesADirectoryOfAnotherUser(t *testing.T) {
	name := "resmongw-testbin-" + strconv.Itoa(os.Geteuid())
	shared := SharedDir(t, os.ModeSticky|0o777)
	t.Setenv("TMPDIR", shared)
	RunAsOtherUser(t, "mkdir", "-m", "755", filepath.Join(shared, name))
	if dir, err := sharedBinDir(false); err == nil || !strings.Contains(err.Error(), "is not a private directory of this user") {
		t.Fatalf("a cache directory nobody made: %q %v, want refused", dir, err)
	}

	ourLoose := filepath.Join(SharedDir(t, os.ModeSticky|0o777), name)
	t.Setenv("TMPDIR", filepath.Dir(ourLoose))
	if err := os.Mkdir(ourLoose, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ourLoose, 0o777); err != nil {
		t.Fatal(err)
	}
	if dir, err := sharedBinDir(false); err == nil {
		t.Fatalf("a cache directory anyone may write: %q, want refused", dir)
	}

	t.Setenv("TMPDIR", SharedDir(t, os.ModeSticky|0o777))
	dir, err := sharedBinDir(false)
	if err != nil {
		t.Fatalf("a fresh cache directory: %v", err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
			t.Fatalf("%s: %v %v, want our directory, mode 0755", d, fi, err)
		}
	}
}
