package paths

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSocketPathPrecedence(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000", SocketEnv: "/tmp/x/env.sock"}
	if p, err := Socket("/tmp/x/flag.sock", envOf(env)); err != nil || p != "/tmp/x/flag.sock" {
		t.Fatalf("flag: %q %v", p, err)
	}
	if p, err := Socket("", envOf(env)); err != nil || p != "/tmp/x/env.sock" {
		t.Fatalf("env: %q %v", p, err)
	}
}

// fakeUserDB makes the user database give our uid home, for the duration of the test.
func fakeUserDB(t *testing.T, home string) {
	t.Helper()
	saved := lookupUID
	lookupUID = func(uid string) (*user.User, error) {
		if uid != strconv.Itoa(os.Getuid()) {
			t.Errorf("looked up uid %s, want ours", uid)
		}
		return &user.User{Uid: uid, HomeDir: home}, nil
	}
	t.Cleanup(func() { lookupUID = saved })
}

// The default socket is the same whatever HOME and XDG_* variables a harness passes (or
// drops): it comes from the uid and the user database.
func TestDefaultSocketIgnoresTheEnvironment(t *testing.T) {
	fakeUserDB(t, "/home/db")
	want := "/home/db/.local/state/resmongw/run/mcp.sock"
	if runtime.GOOS == "darwin" {
		want = "/home/db/Library/Application Support/resmongw/mcp.sock"
	}
	for _, env := range []map[string]string{
		nil,
		{"HOME": "/home/u"},
		{"HOME": "/elsewhere", "XDG_RUNTIME_DIR": "/xdg", "XDG_STATE_HOME": "/st"},
		{"XDG_RUNTIME_DIR": "/run/user/1000"},
	} {
		if p, err := Socket("", envOf(env)); err != nil || p != want {
			t.Errorf("%v: %q %v, want %q", env, p, err, want)
		}
	}
}

// Without a user database entry, $HOME is the last resort.
func TestUserHomeFallsBackToHOME(t *testing.T) {
	saved := lookupUID
	lookupUID = func(string) (*user.User, error) { return nil, user.UnknownUserIdError(os.Getuid()) }
	t.Cleanup(func() { lookupUID = saved })
	t.Setenv("HOME", "/home/fallback")
	if h, err := UserHome(); err != nil || h != "/home/fallback" {
		t.Fatalf("%q %v", h, err)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	long := "/" + strings.Repeat("d", 120) + "/mcp.sock"
	_, err := Socket(long, envOf(nil))
	if !errors.Is(err, ErrPathTooLong) || !strings.Contains(err.Error(), SocketEnv) {
		t.Fatalf("long path: %v", err)
	}
}

func TestSocketPathRelativeFlagMadeAbsolute(t *testing.T) {
	p, err := Socket("rel.sock", envOf(nil))
	if err != nil || !filepath.IsAbs(p) || filepath.Base(p) != "rel.sock" {
		t.Fatalf("relative: %q %v", p, err)
	}
}
