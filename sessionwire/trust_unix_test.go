//go:build linux || darwin

package sessionwire

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Every client's dial checks the socket's directory by the one rule (package ours) before it
// connects. The attack, by nobody for real, in a directory everyone shares (sticky, like
// /tmp): a directory of its own where our socket is looked for, and a link to a directory of
// ours. Each is refused, as is the shared directory itself; nothing is connected to.
func TestDialRefusesASocketDirectoryAnotherUserMade(t *testing.T) {
	shared := testkit.SharedDir(t, os.ModeSticky|0o777)
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	theirs, link := filepath.Join(shared, "resmongw"), filepath.Join(shared, "link")
	testkit.RunAsOtherUser(t, "sh", "-c", `set -e; mkdir -m 700 "$1"; ln -s "$3" "$2"`, "sh", theirs, link, mine)
	for dir, why := range map[string]string{
		theirs: "belongs to uid 65534, not to you",
		link:   "is not a real directory (a symlink or a file)",
		shared: "is writable by others (mode 1777)",
	} {
		c, err := Dial(filepath.Join(dir, "mcp.sock"))
		if err == nil {
			c.Close()
			t.Fatalf("%s: dialled", dir)
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%s: %v, want a refusal saying %q", dir, err, why)
		}
	}
	if _, err := Dial(filepath.Join(mine, "mcp.sock")); !IsDown(err) {
		t.Errorf("our own directory with no daemon: %v, want down", err)
	}
}

// The owner's private group may write the socket's directory (a umask of 002): the one rule,
// not a stricter copy of it.
func TestDialAcceptsADirectoryOfTheOwnersPrivateGroup(t *testing.T) {
	dir := testkit.PrivateGroupDir(t)
	if _, err := Dial(filepath.Join(dir, "mcp.sock")); !IsDown(err) {
		t.Fatalf("a directory only the owner's private group may write: %v, want down (nobody serves), not refused", err)
	}
}
