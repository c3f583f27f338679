package packaging

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/scrub"
)

// harness describes where and how one MCP client keeps its server list.
type harness struct {
	name     string
	format   string // "json" or "toml"
	withType bool   // write "type": "stdio" (what `claude mcp add` writes)
	fileMode os.FileMode
	// file is the config file --write edits when --file is not given.
	file func(home string) (string, error)
}

var harnesses = []harness{
	{name: "claude-code", format: "json", withType: true, fileMode: 0o644, // .mcp.json is meant to be committed
		file: func(string) (string, error) { return filepath.Abs(".mcp.json") }},
	{name: "codex", format: "toml", fileMode: 0o600,
		file: func(home string) (string, error) {
			if d := os.Getenv("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml"), nil
			}
			return filepath.Join(home, ".codex", "config.toml"), nil
		}},
	{name: "cursor", format: "json", fileMode: 0o600,
		file: func(home string) (string, error) { return filepath.Join(home, ".cursor", "mcp.json"), nil }},
	{name: "claude-desktop", format: "json", fileMode: 0o600,
		file: func(home string) (string, error) {
			if runtime.GOOS == "darwin" {
				return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
			}
			dir := os.Getenv("XDG_CONFIG_HOME")
			if dir == "" {
				dir = filepath.Join(home, ".config")
			}
			return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
		}},
}

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

const configUsage = `Usage: resmongw config <harness> [--write] [--force] [--state-dir DIR] [--port N] [--name NAME] [--file PATH]

Harnesses: claude-code, codex, cursor, claude-desktop.
Without --write, prints the entry and where it goes. With --write, merges it into the
harness's config file (backing the file up first), leaving everything else as it was.
No flag takes a token: resmongw never writes one into a config.
`

func runConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resmongw config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, configUsage); fs.PrintDefaults() }
	write := fs.Bool("write", false, "merge the entry into the harness's config file")
	force := fs.Bool("force", false, "with --write: replace a different existing entry of the same name")
	stateDir := fs.String("state-dir", "", "resmon state directory to pin (sets RESMON_STATE_DIR)")
	port := fs.String("port", "", "resmon backend port to pin (sets RESMON_PORT)")
	name := fs.String("name", "resmon", "the server's name in the harness")
	file := fs.String("file", "", "config file to edit instead of the harness's default")

	var positional []string
	for len(args) > 0 { // allow flags before and after the harness name
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return 2
	}
	var h *harness
	for i := range harnesses {
		if harnesses[i].name == positional[0] {
			h = &harnesses[i]
		}
	}
	if h == nil {
		fmt.Fprintf(stderr, "resmongw config: unknown harness %q\n\n%s", positional[0], configUsage)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "resmongw config: "+format+"\n", a...)
		return 1
	}
	if !serverNameRE.MatchString(*name) {
		return fail("--name %q: use letters, digits, '_' and '-' only", *name)
	}
	env := map[string]string{}
	if *port != "" {
		n, err := strconv.Atoi(*port)
		if err != nil || n < 1 || n > 65535 {
			return fail("--port %q is not a port number (1-65535)", *port)
		}
		env["RESMON_PORT"] = strconv.Itoa(n)
	}
	if *stateDir != "" {
		abs, err := filepath.Abs(*stateDir)
		if err != nil {
			return fail("--state-dir: %v", err)
		}
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return fail("--state-dir %s is not a directory", abs)
		} else if err != nil {
			fmt.Fprintf(stderr, "note: %s does not exist yet; resmon creates it when it first runs.\n", abs)
		}
		env["RESMON_STATE_DIR"] = abs
	}
	bin, err := binaryPath()
	if err != nil {
		return fail("%v", err)
	}
	entry := jsonEntry{Command: bin, Args: []string{"stdio"}}
	if len(env) > 0 {
		entry.Env = env
	}
	if h.withType {
		entry.Type = "stdio"
	}

	target := *file
	if target == "" {
		home, err := paths.Home(os.Getenv)
		if err != nil {
			return fail("%v", err)
		}
		if target, err = h.file(home); err != nil {
			return fail("%v", err)
		}
	} else if target, err = filepath.Abs(target); err != nil {
		return fail("%v", err)
	}

	snippet := configSnippet(h, *name, entry)
	if !*write {
		printConfigPreview(stdout, h, *name, entry, target, snippet, writeCommand(fs, h.name))
		return 0
	}
	return writeHarnessConfig(stdout, stderr, h, *name, entry, target, *force)
}

// configSnippet is the entry as it would sit in the harness's file.
func configSnippet(h *harness, name string, e jsonEntry) string {
	if h.format == "toml" {
		return renderCodexTable(name, e)
	}
	return string(marshalPretty(map[string]any{"mcpServers": map[string]jsonEntry{name: e}}, "", "  ")) + "\n"
}

func printConfigPreview(w io.Writer, h *harness, name string, e jsonEntry, target, snippet, writeCmd string) {
	if h.name == "claude-code" {
		fmt.Fprintf(w, "Run this once to add %s to Claude Code for all your projects:\n\n  %s\n\n", name, claudeAddCommand(name, e))
		fmt.Fprintf(w, "Or share it with one project: '%s' merges this into %s:\n\n%s", writeCmd, target, snippet)
		return
	}
	fmt.Fprintf(w, "Add this to %s\n(or run '%s' to merge it in, with a backup):\n\n%s", target, writeCmd, snippet)
}

// writeCommand is the command that writes what was just previewed: the same harness and flags,
// plus --write, so following the hint literally writes the entry that was shown.
func writeCommand(fs *flag.FlagSet, harnessName string) string {
	parts := []string{"resmongw", "config", harnessName}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "write" {
			return
		}
		v := f.Value.String()
		if f.Name == "force" {
			parts = append(parts, "--force")
			return
		}
		if v == "" || strings.ContainsAny(v, " \t'\"\\$`") {
			v = strconv.Quote(v)
		}
		parts = append(parts, "--"+f.Name, v)
	})
	return strings.Join(append(parts, "--write"), " ")
}

// claudeAddCommand is the `claude mcp add` line. -e goes after the name: the flag takes
// several values, and before the name it would swallow the name as one of them.
func claudeAddCommand(name string, e jsonEntry) string {
	parts := []string{"claude", "mcp", "add", "--scope", "user", name}
	for _, k := range sortedKeys(e.Env) {
		parts = append(parts, "-e", shellQuote(k+"="+e.Env[k]))
	}
	parts = append(parts, "--", shellQuote(e.Command))
	for _, a := range e.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func writeHarnessConfig(stdout, stderr io.Writer, h *harness, name string, e jsonEntry, target string, force bool) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "resmongw config: "+format+"\n", a...)
		return 1
	}
	// Edit the real file behind a symlink (dotfile managers), not replace the link.
	if r, err := filepath.EvalSymlinks(target); err == nil {
		target = r
	}
	src, err := os.ReadFile(target)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%v", err)
	}
	var out []byte
	var same bool
	var existing, where string
	if h.format == "toml" {
		m, err := mergeCodexTOML(src, name, renderCodexTable(name, e))
		if err != nil {
			return fail("%s: %v", target, err)
		}
		out, same, existing = m.out, m.same, m.existing
		where = "[mcp_servers." + tomlKey(name) + "]"
	} else {
		m, err := mergeJSON(src, "mcpServers", name, e)
		if err != nil {
			return fail("%s: %v", target, err)
		}
		out, same, existing = m.out, m.same, m.existing
		where = "mcpServers." + name
	}
	if same {
		fmt.Fprintf(stdout, "already configured: %s has this %s entry; nothing written.\n", target, where)
		return 0
	}
	if existing != "" && !force {
		fmt.Fprintf(stderr, "resmongw config: %s already has a different %s entry:\n\n%s\n\nThe entry resmongw would write:\n\n%s\n"+
			"Nothing was changed. Run again with --force to replace it (the file is backed up first),\nor use --name to add this one under another name.\n",
			target, where, indentBlock(redactForDisplay(existing)), indentBlock(configSnippetEntry(h, name, e)))
		return 1
	}
	if leak := findTokenShaped(out, src); leak != "" {
		return fail("refusing to write %s: the result would contain a token-shaped value", target)
	}
	mode := h.fileMode
	if exists {
		if fi, err := os.Stat(target); err == nil {
			mode = fi.Mode().Perm()
		}
		bak, err := backupFile(target, src)
		if err != nil {
			return fail("backing up %s: %v", target, err)
		}
		fmt.Fprintf(stdout, "backup: %s\n", bak)
	}
	if err := writeFileAtomic(target, out, mode); err != nil {
		return fail("%v", err)
	}
	switch {
	case !exists:
		fmt.Fprintf(stdout, "created %s with %s\n", target, where)
	case existing != "":
		fmt.Fprintf(stdout, "replaced %s in %s\n", where, target)
	default:
		fmt.Fprintf(stdout, "added %s to %s\n", where, target)
	}
	fmt.Fprintf(stdout, "Restart %s (or reload its MCP servers) to pick it up.\n", h.name)
	return 0
}

// configSnippetEntry is just the entry (without the mcpServers wrapper) for side-by-side display.
func configSnippetEntry(h *harness, name string, e jsonEntry) string {
	if h.format == "toml" {
		return renderCodexTable(name, e)
	}
	return string(marshalPretty(e, "", "  ")) + "\n"
}

func indentBlock(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ")
}

var (
	// tokenShapedRE matches resmon's API token alphabet and length (reference §5.1).
	tokenShapedRE = regexp.MustCompile(`[A-Za-z0-9_-]{43,128}`)
	// credentialValueRE finds "<credential-shaped key>" = / : "<value>" pairs in JSON or TOML.
	credentialValueRE = regexp.MustCompile(`(?i)("?[A-Za-z0-9_.-]*(?:key|token|secret|password|passphrase|credential|auth)[A-Za-z0-9_.-]*"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*')`)
)

// redactForDisplay hides values an existing entry may carry (another tool's API key, a
// pasted token) before we echo it to the terminal.
func redactForDisplay(s string) string {
	s = scrub.String(s)
	s = credentialValueRE.ReplaceAllString(s, `${1}"[redacted]"`)
	return tokenShapedRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, "/") {
			return m
		}
		return scrub.Placeholder
	})
}

// findTokenShaped returns a token-shaped run in out that the original file did not
// already contain: resmongw must never be the one to write a token.
// A run that is a path segment (next to '/') is a long directory name, not a token.
func findTokenShaped(out, orig []byte) string {
	for _, loc := range tokenShapedRE.FindAllIndex(out, -1) {
		if (loc[0] > 0 && out[loc[0]-1] == '/') || (loc[1] < len(out) && out[loc[1]] == '/') {
			continue
		}
		if m := out[loc[0]:loc[1]]; !bytes.Contains(orig, m) {
			return string(m)
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
