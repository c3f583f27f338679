package packaging

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// fakeClaude puts a claude CLI in place that records each command it is given, one line
// each, and returns the record's path.
func fakeClaude(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$*\" >>'"+log+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lookClaude = func() (string, error) { return bin, nil }
	return log
}

func claudeCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// claudeState writes ~/.claude.json with a user entry and this project's local entry (""
// for none) holding the given commands.
func claudeState(t *testing.T, home, user, local string) {
	t.Helper()
	wd, _ := os.Getwd()
	entry := func(cmd string) string {
		return `{"type": "stdio", "command": "` + cmd + `", "args": ["stdio"], "env": {}}`
	}
	doc := `{"numStartups": 3, "projects": {"` + wd + `": {"allowedTools": [], "mcpServers": {`
	if local != "" {
		doc += `"resmon": ` + entry(local)
	}
	doc += `}}}, "mcpServers": {`
	if user != "" {
		doc += `"resmon": ` + entry(user)
	}
	writeFile(t, filepath.Join(home, ".claude.json"), doc+"}}\n")
}

const addUser = "mcp add --scope user resmon -- " + testBin + " stdio"

// Issue 25.6g: `config claude-code --scope user --write` with a local entry in this project
// is no dead end: it adds the user entry (running the claude CLI), says the local one wins in
// this project and how to remove it; with --force it removes it.
func TestConfigClaudeUserScopeWithALocalEntry(t *testing.T) {
	home := configEnv(t)
	log := fakeClaude(t)
	claudeState(t, home, "", "/old/resmongw")
	code, out, errOut := runCfg(t, "claude-code", "--scope", "user", "--write")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if calls := claudeCalls(t, log); len(calls) != 1 || calls[0] != addUser {
		t.Fatalf("claude ran %q, want %q", calls, addUser)
	}
	wd, _ := os.Getwd()
	for _, want := range []string{
		"running: claude " + addUser,
		"This project (" + wd + ") has a local resmon entry of its own, and Claude Code uses it here instead of the user entry",
		"/old/resmongw",
		"remove it: claude mcp remove resmon --scope local (or run this again with --force, which does that)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The user entry is now there (as the CLI would have written it); --force removes the
	// local one, and adds nothing twice.
	claudeState(t, home, testBin, "/old/resmongw")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCfg(t, "claude-code", "--scope", "user", "--write", "--force")
	if code != 0 {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errOut)
	}
	if calls := claudeCalls(t, log); len(calls) != 1 || calls[0] != "mcp remove resmon --scope local" {
		t.Fatalf("--force: claude ran %q", calls)
	}
	if !strings.Contains(out, "already configured: Claude Code has this resmon entry for all your projects") ||
		!strings.Contains(out, "it is removed, so the user entry applies here too") {
		t.Errorf("--force output:\n%s", out)
	}
}

// A different user entry is a conflict like any other: shown with ours, nothing run, and the
// commands out of it; with --force it is removed and ours added. The same entry runs nothing.
func TestConfigClaudeUserScopeWithADifferentUserEntry(t *testing.T) {
	home := configEnv(t)
	log := fakeClaude(t)
	claudeState(t, home, "/old/resmongw", "")
	code, out, errOut := runCfg(t, "claude-code", "--scope", "user", "--write")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if calls := claudeCalls(t, log); calls != nil {
		t.Fatalf("a conflict ran claude: %q", calls)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Error("a conflict wrote the rules")
	}
	for _, want := range []string{"Claude Code already has a user entry named resmon", "/old/resmongw", "claude " + addUser,
		"resmongw config claude-code --scope user --force --write"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("refusal lacks %q:\n%s", want, errOut)
		}
	}
	if code, out, errOut := runCfg(t, "claude-code", "--scope", "user", "--write", "--force"); code != 0 {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errOut)
	}
	if calls := claudeCalls(t, log); len(calls) != 2 || calls[0] != "mcp remove resmon --scope user" || calls[1] != addUser {
		t.Fatalf("--force: claude ran %q", calls)
	}

	claudeState(t, home, testBin, "")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCfg(t, "claude-code", "--scope", "user", "--write")
	if code != 0 || claudeCalls(t, log) != nil || !strings.Contains(out, "already configured: Claude Code has this resmon entry") {
		t.Fatalf("the same entry: exit %d, claude ran %q\n%s", code, claudeCalls(t, log), out)
	}
}

// Claude Code itself: a local entry added with `claude mcp add`, then resmongw's user scope
// with --force; Claude Code then finds resmon in the user scope only, with resmongw's command.
func TestClaudeCodeUserScopeReplacesALocalEntry(t *testing.T) {
	claude := testkit.HarnessCLI(t, "claude", "RESMONGW_TEST_CLAUDE", testkit.ClaudeInstall)
	home := configEnv(t)
	lookClaude = func() (string, error) { return claude, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	run("mcp", "add", "resmon", "--", "/old/resmongw", "stdio")
	if out := run("mcp", "get", "resmon"); !strings.Contains(out, "Local config") {
		t.Fatalf("no local entry to start from:\n%s", out)
	}
	if code, out, errOut := runCfg(t, "claude-code", "--scope", "user", "--write", "--force"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	out := run("mcp", "get", "resmon")
	if !strings.Contains(out, "User config") || strings.Contains(out, "Local config") || !strings.Contains(out, testBin) {
		t.Fatalf("claude mcp get resmon:\n%s", out)
	}
}
