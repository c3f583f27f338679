package packaging

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/resmongw/resmongw/toolfacts"
)

// toolApprovals is the confirmation model resmongw config writes into a harness's own
// settings, derived from the tool table as the app derives its assistant's pre-approved list:
// every read pre-approved; every write confirmed by the person exactly once, by whoever the
// entry's --writes names. Under ask the gateway asks, so the harness is told not to ask as
// well (two dialogs per write, and a "don't ask again" of the harness that changes nothing);
// under harness the harness asks, with its own "don't ask again" working; under off the
// writes are not offered at all.
type toolApprovals struct {
	reads, writes []string
	policy        string // the entry's --writes: ask, harness or off
}

// approvalsFromToolTable reads the split from the one tool table.
func approvalsFromToolTable(policy string) *toolApprovals {
	return &toolApprovals{reads: toolfacts.ReadTools(), writes: toolfacts.WriteTools(), policy: policy}
}

// Write policies as `resmongw stdio --writes` spells them.
const (
	writesAsk     = "ask"
	writesHarness = "harness"
	writesOff     = "off"
)

// defaultWrites is the policy a harness gets when --writes is not given: the gateway asks,
// except in Claude Desktop, which asks before each tool call itself and shows no form a
// server sends (README, "Confirming writes"), so asking there would refuse every write.
func defaultWrites(harness string) string {
	if harness == "claude-desktop" {
		return writesHarness
	}
	return writesAsk
}

// checkWrites refuses a --writes value `resmongw stdio` would refuse.
func checkWrites(v string) error {
	switch v {
	case writesAsk, writesHarness, writesOff:
		return nil
	}
	return fmt.Errorf("--writes %q: use ask, harness or off", v)
}

// stdioArgs is the entry's argument list for a policy: ask is stdio's default and goes
// unwritten, so the entries written before --writes existed are already right.
func stdioArgs(policy string) []string {
	if policy == writesAsk {
		return []string{"stdio"}
	}
	return []string{"stdio", "--writes=" + policy}
}

// onlyWritesDiffer reports whether two entries (as decoded from the harness's file) are the
// same but for the --writes argument: an entry resmongw wrote for another policy (or before
// --writes existed), which config then updates without --force.
func onlyWritesDiffer(cur, want map[string]any) bool {
	norm := func(m map[string]any) map[string]any {
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		if args, ok := c["args"].([]any); ok {
			var kept []any
			for _, a := range args {
				if s, ok := a.(string); ok && strings.HasPrefix(s, "--writes=") {
					continue
				}
				kept = append(kept, a)
			}
			c["args"] = kept
		}
		delete(c, "tools")
		return c
	}
	return cur != nil && want != nil && reflect.DeepEqual(norm(cur), norm(want))
}

const (
	whyWritesAsk     = "writes: with --writes=ask resmongw asks the person itself, so a prompt here would be a second dialog"
	whyWritesHarness = "writes: with --writes=harness this harness's prompt is the person's only confirmation"
	whyReads         = "reads: resmon's tool table pre-approves them"
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
// every time. Without one, Codex 0.171 asks (as an elicitation of its own) before every tool
// that is not annotated readOnlyHint.
const (
	codexApprove = "approve"
	codexPrompt  = "prompt"
)

// codexModes pairs each tool with the approval_mode it gets, reads first, in table order:
// reads "approve"; writes "approve" under ask (the gateway asks; Codex would be a second
// dialog), "prompt" under harness (Codex's question is the confirmation), none under off.
func (a *toolApprovals) codexModes() [][2]string {
	var out [][2]string
	for _, t := range a.reads {
		out = append(out, [2]string{t, codexApprove})
	}
	mode := map[string]string{writesAsk: codexApprove, writesHarness: codexPrompt}[a.policy]
	if mode == "" {
		return out
	}
	for _, t := range a.writes {
		out = append(out, [2]string{t, mode})
	}
	return out
}

// codexMigrates reports whether an approval_mode already there is one resmongw writes for the
// tool under some policy, which config then changes without --force: a write's "approve" or
// "prompt".
func codexMigrates(tool, have string) bool {
	return slices.Contains(toolfacts.WriteTools(), tool) && (have == codexApprove || have == codexPrompt)
}

// entryForOtherWrites reports whether the JSON entry already there (cur) is want but for its
// --writes argument.
func entryForOtherWrites(cur, want []byte) bool {
	var c, w map[string]any
	if json.Unmarshal(cur, &c) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return onlyWritesDiffer(c, w)
}

// rulesSummary says what a harness's rule list now does, for the report.
func (a *toolApprovals) rulesSummary() string {
	switch a.policy {
	case writesAsk:
		return fmt.Sprintf("%d reads and %d writes allowed: resmongw asks before each write", len(a.reads), len(a.writes))
	case writesHarness:
		return fmt.Sprintf("%d reads allowed; the harness asks before each of the %d writes", len(a.reads), len(a.writes))
	}
	return fmt.Sprintf("%d reads allowed; the writes are off", len(a.reads))
}

// claudeSummary says what the Claude Code rules do, for the preview.
func (a *toolApprovals) claudeSummary() string {
	switch a.policy {
	case writesAsk:
		return "reads and writes run without Claude Code asking: resmongw asks the person before each write"
	case writesHarness:
		return "reads run without asking; Claude Code asks before each write"
	}
	return "reads run without asking; the writes are off"
}

// cursorListed names what goes in Cursor's mcpAllowlist, for the preview.
func (a *toolApprovals) cursorListed() string {
	if a.policy == writesAsk {
		return "resmon's reads and writes (resmongw asks the person before each write)"
	}
	return "resmon's reads"
}

// cursorNote is the line for the person about Cursor's own approvals.
func (a *toolApprovals) cursorNote() string {
	switch a.policy {
	case writesAsk:
		return "resmongw asks the person before each write (a form in Cursor's chat), so Cursor is told not to ask as well. " +
			"A Cursor that shows no MCP forms has every write refused, with a message naming --writes=harness."
	case writesHarness:
		return "Cursor has no setting that makes a tool ask: with --writes=harness resmon's writes ask in Cursor's Allowlist run mode; " +
			"Auto-review lets its classifier decide, and Run Everything never asks."
	}
	return "The writes are off: Cursor is not offered them."
}

// desktopNote is the line for the person about Claude Desktop, which keeps approvals in the app.
func (a *toolApprovals) desktopNote() string {
	switch a.policy {
	case writesHarness:
		return "Claude Desktop keeps tool approvals in the app, not in this file: it asks before a tool runs until you allow that tool for good, " +
			"and with --writes=harness that question is the only confirmation of a write. Allow reads if you like (resmongw tools --reads); " +
			fmt.Sprintf("leave the %d writes asking.", len(a.writes))
	case writesAsk:
		return "With --writes=ask resmongw asks the person before each write; a Claude Desktop that shows no MCP forms has every write refused " +
			"(use --writes=harness there)."
	}
	return "The writes are off: Claude Desktop is not offered them."
}

// codexModeWhy says why a tool's approval_mode should be want, for a conflict.
func codexModeWhy(tool, want string) string {
	if slices.Contains(toolfacts.WriteTools(), tool) {
		return fmt.Sprintf("%s is a write: its approval_mode follows the entry's --writes (here %q)", tool, want)
	}
	return tool + " is a read: resmon's tool table pre-approves it (approval_mode = \"approve\")"
}

// codexSummary says what the approval modes do, for the report.
func (a *toolApprovals) codexSummary() string {
	switch a.policy {
	case writesAsk:
		return `reads and writes "approve": resmongw asks the person before each write, Codex does not ask again`
	case writesHarness:
		return `reads "approve", writes "prompt": Codex asks before each write`
	}
	return `reads "approve"; the writes are off`
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
// file for server. The reads are in allow. Under ask the writes are in allow too (resmongw
// asks; Claude Code's own "Do you want to proceed?" would be a second dialog), and a rule
// that makes one ask is a conflict; under harness no rule names a write, so Claude Code asks
// and its "Yes, and don't ask again" works (an ask rule would override it), and a rule that
// pre-approves one is a conflict; under off the writes are not listed. The per-write rules
// resmongw wrote before (in ask, or in allow) are removed when the policy no longer wants
// them: they are its own. A rule that makes a read ask or blocks it is a conflict.
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
	either := func(fs ...func(string) string) func(string) string {
		return func(rule string) string {
			for _, f := range fs {
				if why := f(rule); why != "" {
					return why
				}
			}
			return ""
		}
	}
	allow := jsonRuleList{path: []string{"permissions", "allow"}, want: rules(a.reads)}
	ask := jsonRuleList{path: []string{"permissions", "ask"}, retire: rules(a.writes),
		conflict: covers("makes these ask:", a.reads, whyReads)}
	switch a.policy {
	case writesAsk:
		allow.want = append(allow.want, rules(a.writes)...)
		ask.conflict = either(ask.conflict, covers("makes these ask:", a.writes, whyWritesAsk))
	case writesHarness:
		allow.retire = rules(a.writes)
		allow.conflict = covers("pre-approves", a.writes, whyWritesHarness)
	default:
		allow.retire = rules(a.writes)
	}
	return []jsonRuleList{allow, ask,
		{path: []string{"permissions", "deny"}, conflict: covers("blocks", a.reads, whyReads)}}
}

// cursorRuleLists is Cursor's one list, mcpAllowlist: the reads, and under ask the writes
// too (resmongw asks; Cursor's own prompt would be a second dialog). Under harness an entry
// that lets a write run without Cursor asking is a conflict. resmongw's own write entries
// from another policy are removed.
func (a *toolApprovals) cursorRuleLists(server string) []jsonRuleList {
	entries := func(tools []string) []string {
		out := make([]string, len(tools))
		for i, t := range tools {
			out[i] = cursorAllowEntry(server, t)
		}
		return out
	}
	l := jsonRuleList{path: []string{"mcpAllowlist"}, want: entries(a.reads)}
	switch a.policy {
	case writesAsk:
		l.want = append(l.want, entries(a.writes)...)
	case writesHarness:
		l.retire = entries(a.writes)
		l.conflict = func(entry string) string {
			if hit := cursorEntryCovers(entry, server, a.writes); len(hit) > 0 {
				return "pre-approves " + strings.Join(hit, ", ") + " (" + whyWritesHarness + ")"
			}
			return ""
		}
	default:
		l.retire = entries(a.writes)
	}
	return []jsonRuleList{l}
}
