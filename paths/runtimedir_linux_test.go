package paths

import (
	"os"
	"path/filepath"
	"testing"
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
