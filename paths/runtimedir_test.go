package paths

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// The package's tests must not depend on whether the machine running them has a logind
// runtime directory: by default none is found; tests that need one say so.
func TestMain(m *testing.M) {
	isLoginRuntimeDir = func(string) bool { return false }
	os.Exit(m.Run())
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

// Without XDG_RUNTIME_DIR (su -, cron), the shim resolves the same socket as the systemd
// service, whose XDG_RUNTIME_DIR is logind's /run/user/<uid>.
func TestSocketPathUsesLoginRuntimeDirWithoutTheVariable(t *testing.T) {
	asked := fakeLoginRuntimeDir(t, true)
	rt := "/run/user/" + strconv.Itoa(os.Getuid())
	p, err := Socket("", envOf(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/st"}))
	if err != nil || p != rt+"/resmongw/mcp.sock" {
		t.Fatalf("%q %v, want the socket in %s", p, err, rt)
	}
	if len(*asked) != 1 || (*asked)[0] != rt {
		t.Fatalf("checked %v, want [%s]", *asked, rt)
	}
	// The service's own view: the variable set to that same directory gives the same path.
	svc, err := Socket("", envOf(map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": rt}))
	if err != nil || svc != p {
		t.Fatalf("with XDG_RUNTIME_DIR=%s: %q %v, want %q", rt, svc, err, p)
	}
}

// A directory that is not logind's (absent, not ours, not private) is not used: the state-home
// fallback is.
func TestSocketPathFallsBackWhenNoLoginRuntimeDir(t *testing.T) {
	asked := fakeLoginRuntimeDir(t, false)
	p, err := Socket("", envOf(map[string]string{"HOME": "/home/u"}))
	if err != nil || p != "/home/u/.local/state/resmongw/run/mcp.sock" {
		t.Fatalf("%q %v", p, err)
	}
	if len(*asked) != 1 {
		t.Fatalf("the runtime directory was checked %d times", len(*asked))
	}
}

// An explicit XDG_RUNTIME_DIR wins without looking at /run/user.
func TestSocketPathVariableNeedsNoCheck(t *testing.T) {
	asked := fakeLoginRuntimeDir(t, true)
	p, err := Socket("", envOf(map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": "/xdg"}))
	if err != nil || p != "/xdg/resmongw/mcp.sock" || len(*asked) != 0 {
		t.Fatalf("%q %v, checked %v", p, err, *asked)
	}
}
