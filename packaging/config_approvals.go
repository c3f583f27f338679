package packaging

import (
	"fmt"
	"strings"

	"github.com/resmongw/resmongw/proxy"
)

// toolApprovals is the confirmation model resmongw config writes into a harness's own
// settings, derived from the tool table as the app derives its assistant's pre-approved list:
// every read pre-approved, every write always asking.
type toolApprovals struct {
	reads, writes []string
}

// approvalsFromToolTable reads the split from the one tool table.
func approvalsFromToolTable() *toolApprovals {
	return &toolApprovals{reads: proxy.ReadTools(), writes: proxy.WriteTools()}
}

const (
	whyWrites = "writes: resmon's tool table has a person confirm each one"
	whyReads  = "reads: resmon's tool table pre-approves them"
)

// ruleConflict is a setting the person already has that contradicts the tool table: shown,
// and left alone unless --force.
type ruleConflict struct {
	setting string // the setting as the harness spells it
	why     string
}

// Codex: per-tool approval_mode under [mcp_servers.<name>.tools.<tool>]. Values from Codex's
// own config types (codex-rs/config/src/mcp_types.rs, AppToolApproval; Codex 0.169.0 accepts
// auto, prompt, writes and approve): "approve" runs the tool without asking, "prompt" asks
// every time.
const (
	codexApprove = "approve"
	codexPrompt  = "prompt"
)

// codexModes pairs each tool with the approval_mode it gets, reads first, in table order.
func (a *toolApprovals) codexModes() [][2]string {
	var out [][2]string
	for _, t := range a.reads {
		out = append(out, [2]string{t, codexApprove})
	}
	for _, t := range a.writes {
		out = append(out, [2]string{t, codexPrompt})
	}
	return out
}

// Claude Code: permission rules "mcp__<server>__<tool>" in a settings file's
// permissions.allow / permissions.ask (code.claude.com/docs/en/permissions). Claude Code
// evaluates deny, then ask, then allow; the first matching rule wins.
func claudeToolRule(server, tool string) string { return "mcp__" + server + "__" + tool }

// claudeRuleCovers lists the tools a rule applies to: the whole server ("mcp__<server>"), one
// tool, or a '*' pattern in the tool part ("mcp__<server>__get_*").
func claudeRuleCovers(rule, server string, tools []string) []string {
	if rule == "mcp__"+server {
		return tools
	}
	pattern, ok := strings.CutPrefix(rule, "mcp__"+server+"__")
	if !ok {
		return nil
	}
	return toolsMatching(pattern, tools)
}

// toolsMatching are the tools a '*' pattern names.
func toolsMatching(pattern string, tools []string) []string {
	var out []string
	for _, t := range tools {
		if wildcardMatch(pattern, t) {
			out = append(out, t)
		}
	}
	return out
}

// Cursor: "<server>:<tool>" entries of mcpAllowlist in ~/.cursor/permissions.json
// (cursor.com/docs/reference/permissions). There is no list that makes a tool ask.
func cursorAllowEntry(server, tool string) string { return server + ":" + tool }

// cursorEntryCovers lists the tools an allowlist entry lets run without asking.
func cursorEntryCovers(entry, server string, tools []string) []string {
	srv, pattern, ok := strings.Cut(entry, ":")
	if !ok || !wildcardMatch(srv, server) {
		return nil
	}
	return toolsMatching(pattern, tools)
}

// wildcardMatch reports whether s matches pattern, where '*' stands for any run of
// characters and everything else is literal.
func wildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// claudeRuleLists are the permission lists resmongw config keeps in a Claude Code settings
// file for server: the reads in allow, the writes in ask; a rule that pre-approves a write,
// or makes a read ask or blocks it, is a conflict.
func (a *toolApprovals) claudeRuleLists(server string) []jsonRuleList {
	rules := func(tools []string) []string {
		out := make([]string, len(tools))
		for i, t := range tools {
			out[i] = claudeToolRule(server, t)
		}
		return out
	}
	covers := func(verb string, tools []string, why string) func(string) string {
		return func(rule string) string {
			if hit := claudeRuleCovers(rule, server, tools); len(hit) > 0 {
				return fmt.Sprintf("%s %s (%s)", verb, strings.Join(hit, ", "), why)
			}
			return ""
		}
	}
	return []jsonRuleList{
		{path: []string{"permissions", "allow"}, want: rules(a.reads),
			conflict: covers("pre-approves", a.writes, whyWrites)},
		{path: []string{"permissions", "ask"}, want: rules(a.writes),
			conflict: covers("makes these ask:", a.reads, whyReads)},
		{path: []string{"permissions", "deny"},
			conflict: covers("blocks", a.reads, whyReads)},
	}
}

// cursorRuleLists is Cursor's one list: the reads in mcpAllowlist; an entry that lets a
// write run without asking is a conflict.
func (a *toolApprovals) cursorRuleLists(server string) []jsonRuleList {
	want := make([]string, len(a.reads))
	for i, t := range a.reads {
		want[i] = cursorAllowEntry(server, t)
	}
	return []jsonRuleList{{path: []string{"mcpAllowlist"}, want: want,
		conflict: func(entry string) string {
			if hit := cursorEntryCovers(entry, server, a.writes); len(hit) > 0 {
				return "pre-approves " + strings.Join(hit, ", ") + " (" + whyWrites + ")"
			}
			return ""
		}}}
}
