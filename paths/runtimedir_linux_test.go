package paths

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// The real check (ownPrivateDir, which TestMain swapped out) accepts only what logind makes: our own real directory, mode 0700.
func TestLoginRuntimeDirCheck(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	private := mk("private", 0o700)
	loose := mk("loose", 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{private: true, loose: false, link: false, file: false, filepath.Join(base, "absent"): false}
	if os.Getuid() == 0 {
		other := mk("other", 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases[other] = false
	}
	for dir, want := range cases {
		if got := ownPrivateDir(dir); got != want {
			t.Errorf("%s: %v, want %v", filepath.Base(dir), got, want)
		}
	}
}

// The attack, by nobody for real: in a directory everyone shares (sticky, like /tmp) it
// makes a private directory that looks like logind's, and a link to our own runtime
// directory. Neither is trusted with our socket; our own is.
func TestLoginRuntimeDirMadeByAnotherUserIsRefused(t *testing.T) {
	shared := testkit.SharedDir(t, os.ModeSticky|0o777)
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	theirs, link := filepath.Join(shared, "runtime"), filepath.Join(shared, "link")
	testkit.RunAsOtherUser(t, "sh", "-c", `set -e; mkdir -m 700 "$1"; ln -s "$3" "$2"`, "sh", theirs, link, mine)
	for dir, want := range map[string]bool{theirs: false, link: false, mine: true} {
		if got := ownPrivateDir(dir); got != want {
			t.Errorf("%s: %v, want %v", dir, got, want)
		}
	}
}
