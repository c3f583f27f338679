//go:build linux || darwin

package ours_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/ours"
)

// The rule on owners and modes: ours and writable by nobody else; a directory on the way may
// also be root's, or sticky; a link's mode means nothing.
func TestJudge(t *testing.T) {
	me := uint32(os.Geteuid())
	other := uint32(testkit.OtherUID)
	if me == other {
		other--
	}
	dir, link := fs.ModeDir, fs.ModeSymlink
	type c struct {
		name     string
		uid, gid uint32
		mode     fs.FileMode
		above    bool
		want     ours.Verdict
	}
	cases := []c{
		{"our private directory", me, me, dir | 0o700, false, ours.Trusted},
		{"our directory others may read", me, me, dir | 0o755, false, ours.Trusted},
		{"our file others may read", me, me, 0o644, false, ours.Trusted},
		{"our file anyone may write", me, me, 0o666, false, ours.OthersWrite},
		{"our directory anyone may write", me, me, dir | 0o777, false, ours.OthersWrite},
		{"our directory anyone may write, on the way", me, me, dir | 0o777, true, ours.OthersWrite},
		{"a sticky directory like /tmp, used itself", me, me, dir | fs.ModeSticky | 0o777, false, ours.OthersWrite},
		{"a sticky directory like /tmp, on the way", me, me, dir | fs.ModeSticky | 0o777, true, ours.Trusted},
		{"a sticky file is no sticky directory", me, me, fs.ModeSticky | 0o666, true, ours.OthersWrite},
		{"our directory a shared group may write", me, other, dir | 0o770, false, ours.OthersWrite},
		{"another user's private directory", other, other, dir | 0o700, false, ours.OtherOwner},
		{"another user's directory, on the way", other, other, dir | 0o755, true, ours.OtherOwner},
		{"our link, whatever its mode", me, me, link | 0o777, false, ours.Trusted},
		{"another user's link", other, other, link | 0o777, true, ours.OtherOwner},
	}
	if me != 0 {
		cases = append(cases,
			c{"root's directory, on the way", 0, 0, dir | 0o755, true, ours.Trusted},
			c{"root's directory, used itself", 0, 0, dir | 0o755, false, ours.OtherOwner},
			c{"root's link, on the way", 0, 0, link | 0o777, true, ours.Trusted})
	}
	for _, tc := range cases {
		if got := ours.Judge(tc.uid, tc.gid, tc.mode, tc.above); got != tc.want {
			t.Errorf("%s (uid %d gid %d mode %v above %v): %v, want %v", tc.name, tc.uid, tc.gid, tc.mode, tc.above, got, tc.want)
		}
	}
}

// Secrets: readable by any group counts, the owner's private one included.
func TestReadableByOthers(t *testing.T) {
	for mode, want := range map[fs.FileMode]bool{0o600: false, 0o700: false, 0o640: true, 0o604: true, 0o644: true} {
		if got := ours.ReadableByOthers(mode); got != want {
			t.Errorf("%04o: %v, want %v", mode, got, want)
		}
	}
}

// The attack the rule is for, made by another user for real: in a directory everyone shares
// (sticky, like /tmp), nobody plants a directory, a file and a link to a directory of ours.
// Each is theirs, used itself or on the way; the shared directory passes only on the way.
func TestAnotherUsersPlantsAreNotOurs(t *testing.T) {
	shared := testkit.SharedDir(t, os.ModeSticky|0o777)
	mine := t.TempDir()
	testkit.RunAsOtherUser(t, "sh", "-c", `set -e; cd "$1"; mkdir -m 755 dir; : >file; chmod 644 file; ln -s "$2" link`, "sh", shared, mine)
	for _, name := range []string{"dir", "file", "link"} {
		fi, err := os.Lstat(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, above := range []bool{false, true} {
			if got := ours.File(fi, above); got != ours.OtherOwner {
				t.Errorf("nobody's %s (above %v): %v, want OtherOwner", name, above, got)
			}
		}
	}
	fi, err := os.Lstat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if got := ours.File(fi, true); got != ours.Trusted {
		t.Errorf("a sticky shared directory on the way: %v, want Trusted", got)
	}
	if got := ours.File(fi, false); got != ours.OthersWrite {
		t.Errorf("a sticky shared directory used itself: %v, want OthersWrite", got)
	}
	fi, err = os.Lstat(mine)
	if err != nil {
		t.Fatal(err)
	}
	if got := ours.File(fi, false); got != ours.Trusted {
		t.Errorf("our own private directory: %v, want Trusted", got)
	}
}
