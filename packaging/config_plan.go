package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"
)

// planConfigEdits works out every file change `resmongw config <harness> --write` makes,
// without touching a file: the server entry and, unless --no-approvals, the harness's own
// approval settings. notes are lines for the person about what the harness cannot be told.
func planConfigEdits(r *configRequest) (edits []*fileEdit, notes []string, err error) {
	if r.target != "" {
		e, err := planEntryEdit(r)
		if err != nil {
			return nil, nil, err
		}
		edits = append(edits, e)
	}
	if r.approvals == nil || r.h.format == "toml" { // Codex keeps them in the entry's own file
		return edits, nil, nil
	}
	switch r.h.name {
	case "claude-code":
		e, err := planRulesEdit(r.claudeSettingsFile(), r.claudeSettingsMode(), r.approvals.claudeRuleLists(r.name), r.force, true)
		if err != nil {
			return nil, nil, err
		}
		e.approvals = describeRuleChanges(e, "permission rules", r.approvals)
		edits = append(edits, e)
		if r.scope == "project" {
			notes = append(notes, claudeProjectNote)
		}
	case "cursor":
		e, skip, err := planCursorEdit(r)
		if err != nil {
			return nil, nil, err
		}
		if skip != "" {
			notes = append(notes, skip)
		} else {
			edits = append(edits, e)
		}
		notes = append(notes, r.approvals.cursorNote())
	case "claude-desktop":
		notes = append(notes, r.approvals.desktopNote())
	}
	return edits, notes, nil
}

const (
	claudeProjectNote = "Claude Code asks once before it starts a project's .mcp.json servers, and applies a project's allow rules only after you trust the folder (its trust dialog)."
)

// planEntryEdit merges the server entry (and for Codex its tool tables) into the entry file.
func planEntryEdit(r *configRequest) (*fileEdit, error) {
	e, err := readEdit(r.target, r.h.fileMode, !r.fileGiven)
	if err != nil {
		return nil, err
	}
	e.proposed = configSnippetEntry(r.h, r.name, r.entry)
	if r.h.format == "toml" {
		var modes [][2]string
		if r.approvals != nil {
			modes = r.approvals.codexModes()
		}
		m, err := mergeCodexTOML(e.src, r.name, r.entry, modes, r.force)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.path, err)
		}
		e.where = "[mcp_servers." + tomlKey(r.name) + "]"
		e.holdsApprovals = r.approvals != nil
		e.out, e.existing, e.conflicts = m.out, m.existing, m.conflicts
		e.entryNew = m.entryNew
		if m.added > 0 || (len(m.conflicts) > 0 && r.force) {
			e.approvals = fmt.Sprintf("approval_mode set for %d tools (%s)", m.added+len(m.conflicts), r.approvals.codexSummary())
		}
		return e, nil
	}
	if err := checkStrictJSON(e, r.h.strictJSON); err != nil {
		return nil, err
	}
	m, err := mergeJSON(e.src, "mcpServers", r.name, r.entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	e.where = "mcpServers." + r.name
	e.out, e.existing = m.out, m.existing
	e.entryNew = !m.same && m.existing == ""
	return e, nil
}

// planRulesEdit merges rule lists into a JSON settings file.
func planRulesEdit(path string, mode os.FileMode, lists []jsonRuleList, force, strict bool) (*fileEdit, error) {
	e, err := readEdit(path, mode, true)
	if err != nil {
		return nil, err
	}
	if err := checkStrictJSON(e, strict); err != nil {
		return nil, err
	}
	m, err := mergeJSONRules(e.src, lists, force)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	e.out, e.conflicts = m.out, m.conflicts
	if m.out == nil {
		e.out = e.src
	}
	e.rulesAdded, e.rulesRemoved = m.added, m.removed
	return e, nil
}

// checkStrictJSON refuses to edit, for a harness that reads plain JSON only, a file that is
// JSONC (comments, trailing commas): the harness cannot read it as it is.
func checkStrictJSON(e *fileEdit, strict bool) error {
	if !strict || len(bytes.TrimSpace(e.src)) == 0 || json.Valid(e.src) {
		return nil
	}
	if _, err := hujson.Parse(e.src); err != nil {
		return nil // not JSONC either: the merge reports it
	}
	return fmt.Errorf("%s has comments or trailing commas, which Claude Code does not read (it reports the file as malformed JSON and ignores it); remove them and run again", e.path)
}

// describeRuleChanges says what an edit of a rules file changes ("" when nothing).
func describeRuleChanges(e *fileEdit, what string, a *toolApprovals) string {
	if e.rulesAdded == 0 && e.rulesRemoved == 0 {
		return ""
	}
	s := fmt.Sprintf("%d %s added", e.rulesAdded, what)
	if e.rulesRemoved > 0 {
		s += fmt.Sprintf(", %d removed (resmongw's own for another --writes, or contradicting the tool table)", e.rulesRemoved)
	}
	return s + " (" + a.rulesSummary() + ")"
}

// claudeSettingsFile is the settings file that matches the scope the entry goes to: the
// project's shared .claude/settings.json beside .mcp.json, or the user's settings file
// (~/.claude/settings.json, or settings.json in $CLAUDE_CONFIG_DIR) for `claude mcp add
// --scope user`.
func (r *configRequest) claudeSettingsFile() string {
	if r.scope == "user" {
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json")
		}
		return filepath.Join(r.home, ".claude", "settings.json")
	}
	return filepath.Join(filepath.Dir(r.target), ".claude", "settings.json")
}

// claudeSettingsMode: the project file is shared like .mcp.json; the user's file may hold
// secrets (env, apiKeyHelper).
func (r *configRequest) claudeSettingsMode() os.FileMode {
	if r.scope == "user" {
		return 0o600
	}
	return 0o644
}

// cursorPermissionsFile is Cursor's per-user permissions.json.
func (r *configRequest) cursorPermissionsFile() string {
	return filepath.Join(r.home, ".cursor", "permissions.json")
}

// planCursorEdit adds the reads to mcpAllowlist in ~/.cursor/permissions.json. Cursor lets
// that key, once present, replace the allowlist kept in its Settings (which resmongw cannot
// read), so resmongw only adds to a list that already exists, and creates one only with --force.
func planCursorEdit(r *configRequest) (e *fileEdit, skip string, err error) {
	path := r.cursorPermissionsFile()
	lists := r.approvals.cursorRuleLists(r.name)
	e, err = planRulesEdit(path, 0o600, lists, r.force, false)
	if err != nil {
		return nil, "", err
	}
	if !r.force && !jsonHasPath(e.src, lists[0].path) {
		return nil, fmt.Sprintf("approvals: not written. %s has no mcpAllowlist, and creating one would replace the MCP allowlist kept in Cursor's Settings; "+
			"run again with --force to create it with resmon's %d reads, or allow them in Cursor's Settings.", path, len(r.approvals.reads)), nil
	}
	e.approvals = describeRuleChanges(e, "mcpAllowlist entries", r.approvals)
	return e, "", nil
}

// generatedNames are the rule strings resmongw writes for this server, which the token guard
// must not mistake for tokens. A name that is token-shaped itself gets no such pass.
func (r *configRequest) generatedNames() []string {
	if r.approvals == nil || len(r.name) >= 43 {
		return nil
	}
	var out []string
	for _, t := range append(append([]string(nil), r.approvals.reads...), r.approvals.writes...) {
		out = append(out, claudeToolRule(r.name, t))
	}
	return out
}
