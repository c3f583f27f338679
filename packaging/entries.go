package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// Entry is one harness entry that launches resmongw, as found in the harness's own file.
type Entry struct {
	Harness string   `json:"harness"`
	Scope   string   `json:"scope,omitempty"` // Claude Code: project, user or local
	File    string   `json:"file"`
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// Entries finds every entry that launches resmongw in the files the config writers edit (and
// Claude Code's user and local scopes in ~/.claude.json), for home and the project directory
// cwd. Files that are missing or unreadable are skipped: a harness not set up has no entry.
func Entries(home, cwd string) []Entry {
	var out []Entry
	add := func(harness, scope, file string, servers map[string]any) {
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m, _ := servers[n].(map[string]any)
			cmd, _ := m["command"].(string)
			if !strings.HasPrefix(filepath.Base(cmd), "resmongw") {
				continue
			}
			var args []string
			list, _ := m["args"].([]any)
			for _, a := range list {
				s, _ := a.(string)
				args = append(args, s)
			}
			out = append(out, Entry{Harness: harness, Scope: scope, File: file, Name: n, Command: cmd, Args: args})
		}
	}
	for _, h := range harnesses {
		file, err := h.file(home)
		if h.name == "claude-code" {
			file, err = filepath.Join(cwd, ".mcp.json"), nil
		}
		if err != nil {
			continue
		}
		switch h.format {
		case "json":
			root := readJSONFile(file)
			scope := ""
			if h.name == "claude-code" {
				scope = "project"
			}
			add(h.name, scope, file, object(root, "mcpServers"))
		case "toml":
			b, err := os.ReadFile(file)
			var root map[string]any
			if err == nil && toml.Unmarshal(b, &root) == nil {
				add(h.name, "", file, object(root, "mcp_servers"))
			}
		}
	}
	// Claude Code's user scope and local (per-project) scope, where `claude mcp add` writes.
	user := filepath.Join(home, ".claude.json")
	root := readJSONFile(user)
	add("claude-code", "user", user, object(root, "mcpServers"))
	add("claude-code", "local", user, object(object(object(root, "projects"), cwd), "mcpServers"))
	return out
}

// WritesPolicy is the entry's --writes value ("ask" when absent) and whether it is one the
// shim accepts.
func (e Entry) WritesPolicy() (policy string, valid bool) {
	policy = "ask"
	for i, a := range e.Args {
		switch {
		case strings.HasPrefix(a, "--writes="), strings.HasPrefix(a, "-writes="):
			_, policy, _ = strings.Cut(a, "=")
		case (a == "--writes" || a == "-writes") && i+1 < len(e.Args):
			policy = e.Args[i+1]
		}
	}
	return policy, slices.Contains([]string{"ask", "harness", "off"}, policy)
}

// readJSONFile decodes a JSON (or JSON with comments) file into a map; nil when it cannot.
func readJSONFile(path string) map[string]any {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if b, err = hujson.Standardize(b); err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}
