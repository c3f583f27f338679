package paths

import (
	"errors"
	"path/filepath"
	"runtime"
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
	delete(env, SocketEnv)
	p, err := Socket("", envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	want := "/run/user/1000/resmongw/mcp.sock"
	if runtime.GOOS == "darwin" {
		want = "/home/u/Library/Application Support/resmongw/mcp.sock"
	}
	if p != want {
		t.Fatalf("default: %q, want %q", p, want)
	}
}

func TestSocketPathFallbacksWithoutRuntimeDir(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS has no XDG_RUNTIME_DIR rule")
	}
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/st"}, "/st/resmongw/run/mcp.sock"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/resmongw/run/mcp.sock"},
		// Relative XDG values are ignored, as the spec says.
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "rel", "XDG_RUNTIME_DIR": "rel"}, "/home/u/.local/state/resmongw/run/mcp.sock"},
	}
	for _, c := range cases {
		if p, err := Socket("", envOf(c.env)); err != nil || p != c.want {
			t.Errorf("%v: %q %v, want %q", c.env, p, err, c.want)
		}
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
