//go:build linux || darwin

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 25.6a: status's fix for a socket in a directory others can write is a private
// directory of the socket's own, never a chmod of a directory others share (with
// RESMONGW_SOCKET in /tmp it used to advise `chmod 700 /tmp`). Each advice is checked by
// following it: the directory it names is created and passes the socket directory's rule.
func TestStatusAdvisesAPrivateDirectoryNeverAChmodOfASharedOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    os.FileMode
		nobody  bool // the directory belongs to another user
		chmodOK bool // ours and not sticky: a chmod may be offered, for when nobody else uses it
	}{
		{"sticky like /tmp", os.ModeSticky | 0o777, false, false},
		{"another user's world-writable directory", 0o777, true, false},
		{"another user's sticky directory", os.ModeSticky | 0o777, true, false},
		{"a world-writable directory of ours", 0o777, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(testkit.ShortTempDir(t), "shared")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.nobody {
				if os.Geteuid() != 0 {
					t.Skip("needs root to give the directory to another user (nobody)")
				}
				if err := os.Chown(dir, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("RESMONGW_SOCKET", filepath.Join(dir, "resmongw.sock"))
			code, out, errOut := runCLI("status")
			if code == 0 {
				t.Fatalf("status accepted the socket:\n%s%s", out, errOut)
			}
			msg := out + errOut
			for _, m := range regexp.MustCompile(`chmod \S+ ([^\s;,)]+)`).FindAllStringSubmatch(msg, -1) {
				if !tc.chmodOK || m[1] != dir {
					t.Errorf("advises %q:\n%s", m[0], msg)
				}
			}
			if tc.chmodOK && !strings.Contains(msg, "if nobody else uses "+dir+": chmod 700 "+dir) {
				t.Errorf("no conditional chmod for a directory of ours:\n%s", msg)
			}
			own := filepath.Join(dir, "resmongw-"+strconv.Itoa(os.Getuid()))
			want := "mkdir -m 700 " + own + ", then set RESMONGW_SOCKET to " + filepath.Join(own, "resmongw.sock")
			if tc.mode&os.ModeSticky == 0 {
				// Others could rename a directory of ours away: no subdirectory offered there.
				want = "set RESMONGW_SOCKET to a socket in a directory only you can write"
			}
			if !strings.Contains(msg, want) || !strings.Contains(msg, "or leave RESMONGW_SOCKET unset (the default socket's directory is private)") {
				t.Fatalf("no private directory advised (%q):\n%s", want, msg)
			}
			if tc.nobody || tc.mode&os.ModeSticky == 0 {
				return // only its owner can make a directory there; or others could rename it
			}
			// Follow the advice: the socket's directory then passes, and status says the
			// daemon is not running rather than refusing the socket.
			if err := os.Mkdir(own, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("RESMONGW_SOCKET", filepath.Join(own, "resmongw.sock"))
			_, out, errOut = runCLI("status")
			if strings.Contains(out+errOut, "refusing the socket") {
				t.Errorf("the advised directory is refused too:\n%s%s", out, errOut)
			}
		})
	}
}
