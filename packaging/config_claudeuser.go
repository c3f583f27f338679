package packaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

	"github.com/resmongw/resmongw/trustfile"
	"github.com/tailscale/hujson"
)

// claudeEntries is what Claude Code's own state file (~/.claude.json) holds under the
// server's name: the user-scope entry (every project) and this project's local-scope entry,
// which Claude Code uses instead of the user one in this project. resmongw only reads that
// file; the claude CLI changes it.
type claudeEntries struct {
	file    string
	project string          // this project's key: the git root above the working directory, or the directory itself
	user    json.RawMessage // nil when absent
	local   json.RawMessage // nil when absent
}

// claudeStateFile is where Claude Code keeps its user and local MCP entries.
func claudeStateFile(home string) string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(home, ".claude.json")
}

// claudeProject is the key Claude Code files a project's local entries under: the root of
// the git work tree holding the working directory, else the working directory.
func claudeProject() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return wd, nil
		}
	}
}

// readClaudeEntries reads, as config --write reads any file, the entries named name.
func readClaudeEntries(home, name string) (*claudeEntries, error) {
	c := &claudeEntries{file: claudeStateFile(home)}
	var err error
	if c.project, err = claudeProject(); err != nil {
		return nil, err
	}
	real, missing, err := trustfile.ResolveForWrite(c.file)
	if err != nil {
		return nil, fmt.Errorf("refusing to read %s: %w", c.file, err)
	}
	if missing > 0 {
		return c, nil
	}
	src, _, err := readOwned(real)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(src)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", c.file, err)
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(std, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", c.file, err)
	}
	c.user = doc.MCPServers[name]
	c.local = doc.Projects[c.project].MCPServers[name]
	return c, nil
}

// sameClaudeEntry compares an entry as Claude Code wrote it with ours: `claude mcp add`
// writes "env": {} for no environment, which is the same as none.
func sameClaudeEntry(have json.RawMessage, want jsonEntry) bool {
	var e jsonEntry
	if json.Unmarshal(have, &e) != nil {
		return false
	}
	norm := func(e jsonEntry) jsonEntry {
		if e.Type == "" {
			e.Type = "stdio"
		}
		if len(e.Env) == 0 {
			e.Env = nil
		}
		if len(e.Args) == 0 {
			e.Args = nil
		}
		return e
	}
	return reflect.DeepEqual(norm(e), norm(want))
}

// claudeCommand is a claude CLI command: its words and how it reads in a shell.
type claudeCommand []string

func (c claudeCommand) String() string {
	s := ""
	for i, w := range c {
		if i > 0 {
			s += " "
		}
		s += shellQuote(w)
	}
	return s
}

func claudeAdd(name string, e jsonEntry) claudeCommand {
	c := claudeCommand{"claude", "mcp", "add", "--scope", "user", name}
	for _, k := range sortedKeys(e.Env) {
		c = append(c, "-e", k+"="+e.Env[k])
	}
	c = append(c, "--", e.Command)
	return append(c, e.Args...)
}

// planClaudeUser works out, before anything is written, what the user-scope entry needs:
// the claude commands to run, in order, and what to tell the person. A different user entry
// is a conflict like any other (replaced with --force); a local entry of this project is not
// in the way of the user entry, but wins over it here, so the person is told, and with
// --force it is removed.
func planClaudeUser(r *configRequest) (cmds []claudeCommand, notes []string, conflict string, err error) {
	c, err := readClaudeEntries(r.home, r.name)
	if err != nil {
		return nil, nil, "", err
	}
	add := claudeAdd(r.name, r.entry)
	switch {
	case c.user == nil:
		cmds = append(cmds, add)
	case sameClaudeEntry(c.user, r.entry):
		notes = append(notes, fmt.Sprintf("already configured: Claude Code has this %s entry for all your projects (%s).", r.name, c.file))
	case !r.force:
		conflict = fmt.Sprintf("Claude Code already has a user entry named %s (in %s), and it differs from resmongw's.\n\nIt has:\n\n%s\n\nresmongw would add:\n\n    %s\n\n",
			r.name, c.file, indentBlock(redactForDisplay(string(c.user))), add)
	default:
		cmds = append(cmds, claudeCommand{"claude", "mcp", "remove", r.name, "--scope", "user"}, add)
	}
	if c.local == nil {
		return cmds, notes, conflict, nil
	}
	removeLocal := claudeCommand{"claude", "mcp", "remove", r.name, "--scope", "local"}
	switch {
	case sameClaudeEntry(c.local, r.entry):
		notes = append(notes, fmt.Sprintf("This project (%s) also has a local %s entry, the same as the user one; Claude Code uses the local one here. Remove it if you like: %s", c.project, r.name, removeLocal))
	case r.force:
		cmds = append(cmds, removeLocal)
		notes = append(notes, fmt.Sprintf("This project (%s) had a local %s entry of its own, which Claude Code would have used here instead; it is removed, so the user entry applies here too.", c.project, r.name))
	default:
		notes = append(notes, fmt.Sprintf("This project (%s) has a local %s entry of its own, and Claude Code uses it here instead of the user entry:\n\n%s\n\n"+
			"To use the user entry here too, remove it: %s (or run this again with --force, which does that).",
			c.project, r.name, indentBlock(redactForDisplay(string(c.local))), removeLocal))
	}
	return cmds, notes, conflict, nil
}

// lookClaude finds the claude CLI; tests replace it.
var lookClaude = func() (string, error) { return exec.LookPath("claude") }

// runClaude runs the claude commands in order, or, when the claude CLI is not on PATH,
// prints them for the person to run. ran says whether it ran any.
func runClaude(stdout, stderr io.Writer, cmds []claudeCommand) (ran bool, code int) {
	if len(cmds) == 0 {
		return false, 0
	}
	bin, err := lookClaude()
	if err != nil {
		fmt.Fprintf(stdout, "The claude CLI is not on PATH; run this to add the entry:\n")
		for _, c := range cmds {
			fmt.Fprintf(stdout, "    %s\n", c)
		}
		return false, 0
	}
	for _, c := range cmds {
		fmt.Fprintf(stdout, "running: %s\n", c)
		cmd := exec.Command(bin, c[1:]...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			return true, configFail(stderr, "'%s' failed (%v); what came before it was done", c, err)
		}
	}
	return true, 0
}
