package packaging

import (
	"fmt"
	"io"

	"github.com/tailscale/hujson"
)

// printConfigPreview shows what --write would write, and where, without touching a file.
func printConfigPreview(w io.Writer, r *configRequest) {
	snippet := configSnippet(r.h, r.name, r.entry)
	hint := writeCommand(r.flags, r.h.name)
	switch r.h.name {
	case "claude-code":
		printClaudeCodePreview(w, r, snippet)
		return
	case "codex":
		if r.approvals != nil {
			snippet += renderCodexApprovals(r.name, r.approvals.codexModes())
		}
	}
	fmt.Fprintf(w, "Add this to %s\n(or run '%s' to merge it in, with a backup):\n\n%s", r.target, hint, snippet)
	if r.approvals == nil {
		return
	}
	switch r.h.name {
	case "cursor":
		fmt.Fprintf(w, "\nApprovals: %s belong in the mcpAllowlist of %s. '%s' adds them when that list exists;\n"+
			"with --force it creates the list, which then replaces the MCP allowlist kept in Cursor's Settings:\n\n%s\n%s\n",
			r.approvals.cursorListed(), r.cursorPermissionsFile(), hint, freshRules(r.approvals.cursorRuleLists(r.name)), r.approvals.cursorNote())
	case "claude-desktop":
		fmt.Fprintf(w, "\n%s\n", r.approvals.desktopNote())
	}
}

func printClaudeCodePreview(w io.Writer, r *configRequest, snippet string) {
	fmt.Fprintf(w, "Run this once to add %s to Claude Code for all your projects:\n\n  %s\n\n", r.name, claudeAddCommand(r.name, r.entry))
	project := *r
	project.scope = "project"
	if project.target == "" {
		project.target, _ = r.h.file(r.home)
	}
	if r.approvals == nil {
		fmt.Fprintf(w, "Or share it with one project: '%s' merges this into %s:\n\n%s", writeCommand(r.flags, r.h.name), project.target, snippet)
		return
	}
	user := *r
	user.scope = "user"
	fmt.Fprintf(w, "Then '%s' adds resmon's approval rules to %s\n(%s; with a backup):\n\n%s\n",
		writeCommand(r.flags, r.h.name, "--scope", "user"), user.claudeSettingsFile(), r.approvals.claudeSummary(), freshRules(r.approvals.claudeRuleLists(r.name)))
	fmt.Fprintf(w, "Or share it with one project: '%s' merges this into %s\nand the same rules into %s:\n\n%s\n%s\n",
		writeCommand(r.flags, r.h.name), project.target, project.claudeSettingsFile(), snippet, claudeProjectNote)
}

// freshRules is the rules file a fresh --write would create: the preview shows the same bytes.
func freshRules(lists []jsonRuleList) string {
	m, _ := mergeJSONRules(nil, lists, false)
	return string(m.out)
}

// jsonHasPath reports whether src, a JSON(C) document, has a value at path.
func jsonHasPath(src []byte, path []string) bool {
	v, err := hujson.Parse(src)
	return err == nil && v.Find(jsonRuleList{path: path}.pointer()) != nil
}
