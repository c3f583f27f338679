package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/paths"
)

// runCLI runs the command line with buffers: nothing reaches the terminal.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

var commands = []string{"stdio", "serve", "status", "install", "uninstall", "start", "stop", "restart",
	"config", "tools", "dev", "dev backend", "demo", "version"}

// Help on every command exits 0, on stdout, with double-dash flags; `help <cmd>` is the
// same help.
func TestHelpOnEveryCommandExitsZero(t *testing.T) {
	for _, c := range commands {
		args := strings.Fields(c)
		code, out, errOut := runCLI(append(args, "--help")...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Usage:") || !strings.Contains(out, "--help") {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c, code, out, errOut)
		}
		if strings.Contains(out, "  -socket") || strings.Contains(out, "Usage of") {
			t.Errorf("%s --help prints Go's flag usage:\n%s", c, out)
		}
		hcode, hout, _ := runCLI(append([]string{"help"}, args...)...)
		if hcode != 0 || hout != out {
			t.Errorf("help %s: exit %d, and not the same text as --help:\n%s", c, hcode, hout)
		}
	}
	if code, out, _ := runCLI("status", "--help"); code != 0 || !strings.Contains(out, "--verbose") || !strings.Contains(out, "--json") {
		t.Errorf("status --help: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "demo") || !strings.Contains(out, "status") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// Usage errors exit 2 and say what is wrong, with a suggestion for a near miss.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"statsu"}, "Did you mean this?\n\tstatus"},
		{[]string{"resart"}, "restart"},
		{[]string{"dev", "bakend"}, "Did you mean this?\n\tbackend"},
		{[]string{"status", "--bogus"}, "--bogus"},
		{[]string{"status", "extra"}, `"extra"`},
		{[]string{"stdio", "extra"}, `"extra"`},
		{[]string{"config"}, "accepts 1 arg"},
		{[]string{"config", "cursor", "--port", "abc"}, "not a port"},
		{[]string{"serve", "--request-timeout", "soon"}, "request-timeout"},
		{[]string{"serve", "--retry-wait", "-1s"}, "--retry-wait must not be negative"},
		{[]string{"tools", "--reads", "--writes"}, "Usage"},
		{[]string{"tools", "extra"}, `"extra"`},
		{[]string{"config", "cursor", "codex"}, "accepts 1 arg"},
		{[]string{"config", "cursor", "--token", "x"}, "unknown flag: --token"}, // no flag takes a token
		{[]string{"dev", "backend", "--bogus"}, "--bogus"},
		{[]string{"dev", "backend", "extra"}, `"extra"`},
		{[]string{"stop", "extra"}, `"extra"`},
		{[]string{"install", "--no-start=maybe"}, "--no-start"},
		{nil, "Usage:"},
	} {
		code, out, errOut := runCLI(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d (want 2), stderr %q (want %q), stdout %q", c.args, code, errOut, c.want, out)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, _ := runCLI(args...); code != 0 || !strings.HasPrefix(out, "resmongw ") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}

// The tests of a package that runs the binary see a private, empty /run/user
// (testkit.MainWithBinary), so a test that forgets its socket gets a throw-away default and
// never starts a daemon on the real user's.
func TestTheTestsDefaultSocketIsPrivate(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("without root the tests get no private /run/user")
	}
	def, err := paths.DefaultSocket()
	if want := "/run/user/" + strconv.Itoa(os.Getuid()) + "/resmongw/mcp.sock"; err != nil || def != want {
		t.Fatalf("the tests' default socket is %q (%v), want %s in their private /run/user", def, err, want)
	}
	if _, err := os.Stat("/run/user/.resmongw-tests"); err != nil {
		t.Fatalf("/run/user is not the tests' own: %v", err)
	}
}
