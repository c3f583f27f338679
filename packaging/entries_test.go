package packaging

import (
	"os"
	"path/filepath"
	"testing"
)

// Entries finds resmongw's entries in every place a harness keeps them, Claude Code's three
// scopes included, and nothing else's.
func TestEntriesFindsEveryScope(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude.json"), `{"mcpServers": {"resmon": {"command": "/usr/bin/resmongw", "args": ["stdio"]}, "other": {"command": "npx"}},
		"projects": {"`+project+`": {"mcpServers": {"resmon-local": {"command": "resmongw", "args": ["stdio", "--writes", "off"]}}}}}`)
	write(filepath.Join(project, ".mcp.json"), `{"mcpServers": {"resmon": {"type": "stdio", "command": "/opt/resmongw", "args": ["stdio", "--writes=harness"]}}}`)
	write(filepath.Join(home, ".cursor", "mcp.json"), `{ // comments are fine
		"mcpServers": {"resmon": {"command": "/opt/resmongw", "args": ["stdio", "--writes=maybe"]},}}`)
	got := map[string]string{}
	for _, e := range Entries(home, project) {
		p, ok := e.WritesPolicy()
		if !ok {
			p = "invalid:" + p
		}
		got[e.Harness+"/"+e.Scope+"/"+e.Name] = p
	}
	want := map[string]string{
		"claude-code/user/resmon":        "ask",
		"claude-code/local/resmon-local": "off",
		"claude-code/project/resmon":     "harness",
		"cursor//resmon":                 "invalid:maybe",
	}
	if len(got) != len(want) {
		t.Errorf("found %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
