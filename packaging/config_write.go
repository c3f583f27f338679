package packaging

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/resmongw/resmongw/internal/lazyre"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/trustfile"
)

// fileEdit is one file `resmongw config --write` changes: what it holds now, what it will
// hold, and what stands in the way.
type fileEdit struct {
	path   string
	mode   os.FileMode // the file's mode, or the one a new file gets
	src    []byte
	exists bool
	out    []byte // the new content; equal to src when nothing changes

	// For the server entry: where it sits ("mcpServers.resmon", "[mcp_servers.resmon]"), a
	// different entry already there, and what would replace it.
	where    string
	existing string
	proposed string
	entryNew bool // the entry is being added (not there before)

	conflicts    []ruleConflict
	approvals    string // what changes in the approval settings, for the report ("" for none)
	rulesAdded   int
	rulesRemoved int
	// holdsApprovals: the entry's file also holds the approval settings (Codex).
	holdsApprovals bool
	// mkdirs: directories above the file are missing and may be created.
	mkdirs bool
}

func (e *fileEdit) changes() bool { return !e.exists || !bytes.Equal(e.out, e.src) }

// readEdit reads the file behind path for an edit. Only a path nobody else controls is
// followed (trustfile.ResolveForWrite): a dotfile manager's link of the user's own leads to
// the real file, which is then edited; a link another user planted, or a directory others can
// write, stops the edit before anything is read. A read-only file is refused: someone made
// it so on purpose. mkdirs says whether missing directories above the file may be created
// (a harness's own directory may; the one --file names must exist).
func readEdit(path string, mode os.FileMode, mkdirs bool) (*fileEdit, error) {
	real, missing, err := trustfile.ResolveForWrite(path)
	if err != nil {
		return nil, fmt.Errorf("refusing to write %s: %w", path, err)
	}
	if missing > 1 && !mkdirs {
		dir := filepath.Dir(real)
		return nil, fmt.Errorf("%s: the directory %s does not exist, and resmongw does not create the directories --file names; create it (mkdir -p %s) or name a file in a directory that exists", path, dir, shellQuote(dir))
	}
	e := &fileEdit{path: real, mode: mode, mkdirs: missing > 1}
	if missing > 0 {
		return e, nil
	}
	src, perm, err := readOwned(real)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	if err := writable(real, perm); err != nil {
		return nil, err
	}
	e.src, e.exists, e.mode = src, true, perm
	return e, nil
}

// writable refuses a file its owner made read-only.
func writable(path string, perm fs.FileMode) error {
	if perm&0o200 != 0 {
		return nil
	}
	return fmt.Errorf("%s is read-only (mode %04o), so resmongw leaves it alone; nothing was written. To let resmongw edit it, make it writable (chmod u+w %s) and run again", path, perm, shellQuote(path))
}

// errChangedMeanwhile: another program wrote the file between our read and our replace.
var errChangedMeanwhile = errors.New("changed while resmongw was editing it")

// unchanged re-reads the file just before it is replaced: what another program wrote to it
// since it was read (an editor, the harness itself) must not be lost.
func (e *fileEdit) unchanged() error {
	src, perm, err := readOwned(e.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if e.exists {
			return fmt.Errorf("%s was removed while resmongw was editing it; nothing was written to it. Run the command again", e.path)
		}
		return nil
	case err != nil:
		return err
	case !e.exists || !bytes.Equal(src, e.src):
		return fmt.Errorf("%s %w (another program wrote to it); nothing was written to it, so what was written there is kept. Run the command again to merge into what it holds now", e.path, errChangedMeanwhile)
	}
	return writable(e.path, perm)
}

// writeConfig plans every file the harness needs, refuses them all when one holds a
// conflict (unless --force), and then writes each changed file after a backup.
func writeConfig(stdout, stderr io.Writer, r *configRequest) int {
	edits, notes, err := planConfigEdits(r)
	if err != nil {
		return configFail(stderr, "%v", err)
	}
	var claude []claudeCommand
	var userConflict string
	if r.h.name == "claude-code" && r.scope == "user" {
		var more []string
		if claude, more, userConflict, err = planClaudeUser(r); err != nil {
			return configFail(stderr, "%v", err)
		}
		notes = append(notes, more...)
	}
	if userConflict != "" {
		fmt.Fprint(stderr, "resmongw config: "+userConflict)
	}
	if blocked := reportConflicts(stderr, edits, r, userConflict != ""); blocked {
		return 1
	}
	ours := r.generatedNames()
	for _, e := range edits {
		if e.changes() && findTokenShaped(e.out, e.src, ours...) != "" {
			return configFail(stderr, "refusing to write %s: the result would contain a token-shaped value", e.path)
		}
	}
	wrote := false
	for _, e := range edits {
		if !e.changes() {
			fmt.Fprintf(stdout, "already configured: %s; nothing written.\n", e.alreadyText())
			continue
		}
		if err := commitEdit(stdout, e); err != nil {
			return configFail(stderr, "%v", err)
		}
		wrote = true
	}
	ran, code := runClaude(stdout, stderr, claude)
	if code != 0 {
		return code
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	if wrote || ran {
		fmt.Fprintf(stdout, "Restart %s (or reload its MCP servers) to pick it up.\n", r.h.name)
	}
	return 0
}

func (e *fileEdit) alreadyText() string {
	if e.where != "" && e.holdsApprovals {
		return fmt.Sprintf("%s has this %s entry and resmon's approval settings", e.path, e.where)
	}
	if e.where != "" {
		return fmt.Sprintf("%s has this %s entry", e.path, e.where)
	}
	return fmt.Sprintf("%s has resmon's approval settings", e.path)
}

// commitEdit backs up the file (when it holds anything) and replaces it, unless it changed
// since it was read: then the backup goes again and the file keeps what it holds.
func commitEdit(stdout io.Writer, e *fileEdit) error {
	bak := ""
	if e.exists && len(e.src) > 0 {
		var err error
		if bak, err = backupFile(e.path, e.src); err != nil {
			return fmt.Errorf("backing up %s: %v", e.path, err)
		}
	}
	if err := writeFileAtomic(e.path, e.out, e.mode, e.mkdirs, e.unchanged); err != nil {
		if bak != "" {
			os.Remove(bak)
		}
		return err
	}
	if bak != "" {
		fmt.Fprintf(stdout, "backup: %s\n", bak)
	}
	switch {
	case e.where == "":
	case !e.exists:
		fmt.Fprintf(stdout, "created %s with %s\n", e.path, e.where)
	case e.existing != "":
		fmt.Fprintf(stdout, "replaced %s in %s\n", e.where, e.path)
	case e.entryNew:
		fmt.Fprintf(stdout, "added %s to %s\n", e.where, e.path)
	}
	if e.approvals != "" {
		fmt.Fprintf(stdout, "approvals: %s in %s\n", e.approvals, e.path)
	}
	return nil
}

// reportConflicts prints every different entry and contradicting approval setting; without
// --force they block the whole write. It ends with the commands that resolve them, one per way
// out, each the same command as this run plus the one flag that differs.
func reportConflicts(stderr io.Writer, edits []*fileEdit, r *configRequest, entryConflict bool) (blocked bool) {
	entries, settings := entryConflict, false
	blocked = entryConflict
	for _, e := range edits {
		if (e.existing == "" && len(e.conflicts) == 0) || r.force {
			continue
		}
		blocked = true
		if e.existing != "" {
			entries = true
			fmt.Fprintf(stderr, "resmongw config: %s already has an entry named %s (%s), and it differs from resmongw's.\n\nIt has:\n\n%s\n\nresmongw would write:\n\n%s\n\n",
				e.path, r.name, e.where, indentBlock(redactForDisplay(e.existing)), indentBlock(e.proposed))
		}
		if len(e.conflicts) > 0 {
			settings = true
			fmt.Fprintf(stderr, "resmongw config: %s has approval settings for %s that contradict resmon's tool table (reads run without asking, writes ask):\n\n", e.path, r.name)
			for _, c := range e.conflicts {
				fmt.Fprintf(stderr, "    %s\n        %s\n", redactForDisplay(c.setting), c.why)
			}
			fmt.Fprintln(stderr)
		}
	}
	if !blocked {
		return false
	}
	var scope []string
	if r.scope == "user" {
		scope = []string{"--scope", "user"}
	}
	what := "that entry with resmongw's"
	switch {
	case entries && settings:
		what = "that entry and those settings with resmongw's"
	case settings:
		what = "those settings with resmon's tool table"
	}
	fmt.Fprintf(stderr, "Nothing was changed. To replace %s (each file is backed up first):\n    %s\n",
		what, writeCommand(r.flags, r.h.name, append(scope, "--force")...))
	if entries {
		fmt.Fprintf(stderr, "To keep it and add resmongw's entry beside it, under another name:\n    %s\n",
			writeCommand(r.flags, r.h.name, append(scope, "--name", r.name+"-gw")...))
	}
	if settings && !entries {
		fmt.Fprintf(stderr, "To keep your settings and write only the server entry:\n    %s\n",
			writeCommand(r.flags, r.h.name, append(scope, "--no-approvals")...))
	}
	return true
}

var (
	// tokenShapedRE matches resmon's API token alphabet and length (reference §5.1).
	tokenShapedRE = lazyre.New(`[A-Za-z0-9_-]{43,128}`)
	// credentialValueRE finds "<credential-shaped key>" = / : "<value>" pairs in JSON or TOML.
	credentialValueRE = lazyre.New(`(?i)("?[A-Za-z0-9_.-]*(?:key|token|secret|password|passphrase|credential|auth)[A-Za-z0-9_.-]*"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*')`)
)

// redactForDisplay hides values an existing entry may carry (another tool's API key, a
// pasted token) before we echo it to the terminal.
func redactForDisplay(s string) string {
	s = scrub.String(s)
	s = credentialValueRE().ReplaceAllString(s, `${1}"[redacted]"`)
	return tokenShapedRE().ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, "/") {
			return m
		}
		return scrub.Placeholder
	})
}

// findTokenShaped returns a token-shaped run in out that the original file did not
// already contain: resmongw must never be the one to write a token.
// A run that is a path segment (next to '/') is a long directory name, not a token, and a run
// inside one of the names resmongw itself generates (a permission rule such as
// mcp__<name>__get_watchdog_findings) is not one either.
func findTokenShaped(out, orig []byte, generated ...string) string {
	for _, loc := range tokenShapedRE().FindAllIndex(out, -1) {
		if (loc[0] > 0 && out[loc[0]-1] == '/') || (loc[1] < len(out) && out[loc[1]] == '/') {
			continue
		}
		m := out[loc[0]:loc[1]]
		if bytes.Contains(orig, m) || insideAny(string(m), generated) {
			continue
		}
		return string(m)
	}
	return ""
}

func insideAny(s string, in []string) bool {
	for _, g := range in {
		if strings.Contains(g, s) {
			return true
		}
	}
	return false
}
