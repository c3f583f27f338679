package paths

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// The package's tests must not depend on whether the machine running them has a logind
// runtime directory: by default none is found; tests that need one say so.
func TestMain(m *testing.M) {
	isLoginRuntimeDir = func(string) bool { return false }
	testkit.Exit(m.Run())
}

// fakeLoginRuntimeDir makes the runtime-directory check answer ok and records what it was
// asked about, for the duration of the test.
func fakeLoginRuntimeDir(t *testing.T, ok bool) *[]string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux looks for logind's runtime directory")
	}
	var asked []string
	saved := isLoginRuntimeDir
	isLoginRuntimeDir = func(dir string) bool { asked = append(asked, dir); return ok }
	t.Cleanup(func() { isLoginRuntimeDir = saved })
	return &asked
}

// The login runtime directory, when logind made it for us, is the default on Linux whatever
// the environment says: the service (XDG_RUNTIME_DIR=/run/user/<uid>) and a harness that
// dropped the variable resolve the same socket.
func TestSocketPathUsesLoginRuntimeDir(t *testing.T) {
	asked := fakeLoginRuntimeDir(t, true)
	rt := "/run/user/" + strconv.Itoa(os.Getuid())
	p, err := Socket("", envOf(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/st"}))
	if err != nil || p != rt+"/resmongw/mcp.sock" {
		t.Fatalf("%q %v, want the socket in %s", p, err, rt)
	}
	if len(*asked) != 1 || (*asked)[0] != rt {
		t.Fatalf("checked %v, want [%s]", *asked, rt)
	}
	for _, xdg := range []string{rt, "/somewhere/else"} {
		svc, err := Socket("", envOf(map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": xdg}))
		if err != nil || svc != p {
			t.Fatalf("with XDG_RUNTIME_DIR=%s: %q %v, want %q", xdg, svc, err, p)
		}
	}
}

// A directory that is not logind's (absent, not ours, not private) is not used: the home
// fallback is.
func TestSocketPathFallsBackWhenNoLoginRuntimeDir(t *testing.T) {
	asked := fakeLoginRuntimeDir(t, false)
	fakeUserDB(t, "/home/db")
	p, err := Socket("", envOf(map[string]string{"HOME": "/home/u"}))
	if err != nil || p != "/home/db/.local/state/resmongw/run/mcp.sock" {
		t.Fatalf("%q %v", p, err)
	}
	if len(*asked) != 1 {
		t.Fatalf("the runtime directory was checked %d times", len(*asked))
	}
}
