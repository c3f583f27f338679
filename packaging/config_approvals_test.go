package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/toolfacts"
)

// The approval split is the tool table's: every read pre-approved; the writes' modes follow
// the entry's --writes (Codex "approve" under ask, since the gateway asks; "prompt" under
// harness; none under off), none left out and none in both.
func TestApprovalsFollowTheToolTable(t *testing.T) {
	for policy, writeMode := range map[string]string{writesAsk: codexApprove, writesHarness: codexPrompt, writesOff: ""} {
		a := approvalsFromToolTable(policy)
		// The contract's seven writes, written out here rather than read from the table, so a
		// table or a split that lets a write pass as a read fails.
		contractWrites := []string{"run_sweep", "create_routine", "create_watch_profile", "run_routine",
			"activate_routine", "deactivate_routine", "update_settings"}
		if !slices.Equal(a.writes, contractWrites) || len(a.reads)+len(a.writes) != len(toolfacts.Rows) {
			t.Fatalf("%s: approvals split %d reads / writes %v, want every other of the %d tools a read and the contract's writes %v",
				policy, len(a.reads), a.writes, len(toolfacts.Rows), contractWrites)
		}
		for _, r := range a.reads {
			if slices.Contains(contractWrites, r) {
				t.Fatalf("%s: write %s approved as a read", policy, r)
			}
		}
		modes := a.codexModes()
		want := len(toolfacts.Rows)
		if writeMode == "" {
			want = len(toolfacts.ReadTools())
		}
		if len(modes) != want {
			t.Fatalf("%s: %d codex modes, want %d", policy, len(modes), want)
		}
		for _, m := range modes {
			tool, _ := toolfacts.ByName(m[0])
			if want := map[bool]string{false: codexApprove, true: writeMode}[tool.RequiresConfirmation]; m[1] != want {
				t.Errorf("%s: %s: approval_mode %q, want %q", policy, m[0], m[1], want)
			}
		}
	}
}

// Which of the person's rules reach which tools: whole-server rules, exact rules, '*'
// patterns; another server's rules never.
func TestRuleCoverage(t *testing.T) {
	tools := []string{"health", "get_routine", "get_execution", "run_sweep"}
	for _, tc := range []struct {
		rule string
		want []string
	}{
		{"mcp__resmon", tools},
		{"mcp__resmon__*", tools},
		{"mcp__resmon__get_*", []string{"get_routine", "get_execution"}},
		{"mcp__resmon__*_routine", []string{"get_routine"}},
		{"mcp__resmon__run_sweep", []string{"run_sweep"}},
		{"mcp__resmon__run", nil},
		{"mcp__resmonx__health", nil},
		{"mcp__lab__health", nil},
		{"Bash(ls)", nil},
	} {
		if got := claudeRuleCovers(tc.rule, "resmon", tools); !slices.Equal(got, tc.want) {
			t.Errorf("claude %q covers %v, want %v", tc.rule, got, tc.want)
		}
	}
	for _, tc := range []struct {
		entry string
		want  []string
	}{
		{"resmon:*", tools},
		{"*:*", tools},
		{"resmon:run_*", []string{"run_sweep"}},
		{"res*:health", []string{"health"}},
		{"github:*", nil},
		{"resmon", nil},
	} {
		if got := cursorEntryCovers(tc.entry, "resmon", tools); !slices.Equal(got, tc.want) {
			t.Errorf("cursor %q covers %v, want %v", tc.entry, got, tc.want)
		}
	}
}

// A long --name makes long permission rules (mcp__<name>__get_watchdog_findings passes the
// token-shaped length); they are resmongw's own and do not trip the token guard. A name that
// is token-shaped itself still does.
func TestTokenGuardKnowsTheRulesItWrites(t *testing.T) {
	home := configEnv(t)
	name := "resmon-second-instance" // 22 characters: its rules are 49 and more
	if code, out, errOut := runCfg(t, "claude-code", "--write", "--name", name); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := readFile(t, filepath.Join(home, "project", ".claude", "settings.json")); !strings.Contains(got, "mcp__"+name+"__get_watchdog_findings") {
		t.Fatalf("rules missing:\n%s", got)
	}
	tokenName := "Zm9vYmFyYmF6cXV4cXV1eHh5enp5MTIzNDU2Nzg5MDEy" // 44 characters
	code, _, errOut := runCfg(t, "cursor", "--write", "--name", tokenName)
	if code != 1 || !strings.Contains(errOut, "token-shaped") {
		t.Fatalf("a token-shaped name was written: exit %d, %s", code, errOut)
	}
}

func TestConfigScopeFlag(t *testing.T) {
	configEnv(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"codex", "--scope", "user"}, "claude-code only"},
		{[]string{"claude-code", "--scope", "global"}, "use 'user' or 'project'"},
		{[]string{"claude-code", "--scope", "user", "--file", "x.json"}, "no entry file"},
		{[]string{"claude-code", "--scope", "user", "--no-approvals", "--write"}, "nothing to write"},
	} {
		if code, _, errOut := runCfg(t, tc.args...); code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q (want %q)", tc.args, code, errOut, tc.msg)
		}
	}
}
