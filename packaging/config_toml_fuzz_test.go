package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whatever TOML the person has, a merge either refuses with a reason or yields a file that
// go-toml reads back with the entry and every approval_mode in it (mergeCodexTOML checks that
// itself and reports "internal error" otherwise), and merging that file again changes nothing.
func FuzzCodexMergeIsSafeAndIdempotent(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "config", "*", "in", ".codex", "config.toml"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), false)
			f.Add(string(b), true)
		}
	}
	f.Add("", false)
	f.Add("a = 1\n[b]\nc = \"\"\"x\n[mcp_servers.resmon]\n\"\"\"", true)
	entry := jsonEntry{Command: "/opt/resmon/bin/resmongw", Args: []string{"stdio"}, Env: map[string]string{"RESMON_PORT": "8791"}}
	modes := approvalsFromToolTable(writesAsk).codexModes()
	f.Fuzz(func(t *testing.T, src string, force bool) {
		m, err := mergeCodexTOML([]byte(src), "resmon", entry, modes, force)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("merge produced a file it cannot read back: %v\n%q", err, src)
			}
			return
		}
		if m.out == nil {
			return // refused: a different entry or contradicting settings, without force
		}
		again, err := mergeCodexTOML(m.out, "resmon", entry, modes, false)
		if err != nil || string(again.out) != string(m.out) {
			t.Fatalf("a second merge changed the file (err %v):\nfirst:\n%s\nsecond:\n%s", err, m.out, again.out)
		}
	})
}

// The same for a Claude Code settings file: a refusal, or a file that still parses, holds every
// rule, keeps every rule that was there and did not conflict, and does not change on a second merge.
func FuzzClaudeRulesMergeIsSafeAndIdempotent(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "config", "*", "in", "*", ".claude", "settings.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), false)
			f.Add(string(b), true)
		}
	}
	f.Add(`{"permissions": {"allow": [], "ask": ["x"]}}`, false)
	f.Add(`{"permissions": {"allow": ["mcp__resmon"]}}`, true)
	lists := approvalsFromToolTable(writesAsk).claudeRuleLists("resmon")
	f.Fuzz(func(t *testing.T, src string, force bool) {
		m, err := mergeJSONRules([]byte(src), lists, force)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("merge produced a file it cannot read back: %v\n%q", err, src)
			}
			return
		}
		if m.out == nil {
			return
		}
		again, err := mergeJSONRules(m.out, lists, false)
		if err != nil || again.added != 0 || again.removed != 0 || len(again.conflicts) != 0 || string(again.out) != string(m.out) {
			t.Fatalf("a second merge changed the file (err %v, %+v):\nfirst:\n%s\nsecond:\n%s", err, again, m.out, again.out)
		}
	})
}
