package packaging

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/internal/lazyre"
	"github.com/resmongw/resmongw/paths"
	"github.com/spf13/pflag"
)

// harness describes where and how one MCP client keeps its server list and its own tool
// approval settings.
type harness struct {
	name     string
	format   string // "json" or "toml"
	withType bool   // write "type": "stdio" (what `claude mcp add` writes)
	// strictJSON: the harness reads plain JSON only, so a file with comments or trailing commas
	// is refused rather than edited (Claude Code 2.1.328's doctor reports such a file as
	// malformed and ignores it).
	strictJSON bool
	fileMode   os.FileMode
	// file is the config file --write edits when --file is not given.
	file func(home string) (string, error)
}

var harnesses = []harness{
	{name: "claude-code", format: "json", withType: true, strictJSON: true, fileMode: 0o644, // .mcp.json is meant to be committed
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

var serverNameRE = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

const configUsage = `Usage: resmongw config <harness> [--write] [--force] [--no-approvals] [--scope user|project]
                       [--writes ask|harness|off] [--state-dir DIR] [--port N] [--name NAME] [--file PATH]

Harnesses: claude-code, codex, cursor, claude-desktop.
Without --write, prints the entry, resmon's approval settings for that harness (reads run
without asking, writes always ask) and where they go. With --write, merges them into the
harness's own files (backing each file up first), leaving everything else as it was.
No flag takes a token: resmongw never writes one into a config.
`

// configRequest is one `resmongw config` run, parsed and checked.
type configRequest struct {
	h      *harness
	name   string
	entry  jsonEntry
	target string // the file the entry goes in; "" when a harness command adds it (claude-code --scope user)
	home   string
	scope  string // claude-code only: "project" (.mcp.json) or "user" (claude mcp add --scope user)
	write  bool
	force  bool
	// fileGiven: --file named the entry's file, whose directory must exist.
	fileGiven bool
	// approvals is the tool table's split; nil with --no-approvals.
	approvals *toolApprovals
	flags     *pflag.FlagSet // the parsed flags, to repeat them in hints (nil: none given)
}

// ConfigMain runs `resmongw config <harness>` with o, its parsed flags: print, or with
// --write merge into the harness's own files, the entry that launches `resmongw stdio` and the
// harness's approval settings for resmon's tools (reads pre-approved, writes always asking).
func ConfigMain(harnessName string, o ConfigOptions, stdout, stderr io.Writer) int {
	req, code := parseConfigRequest(harnessName, o, stderr)
	if req == nil {
		return code
	}
	if !req.write {
		printConfigPreview(stdout, req)
		return 0
	}
	return writeConfig(stdout, stderr, req)
}

func configFail(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "resmongw config: "+format+"\n", a...)
	return 1
}

// parseConfigRequest checks the flags and the harness name and builds the entry; on failure
// it has printed why and returns the exit code.
func parseConfigRequest(harnessName string, o ConfigOptions, stderr io.Writer) (*configRequest, int) {
	req, code := buildConfigRequest(harnessName, o, stderr)
	if req == nil {
		return nil, code
	}
	// Who confirms writes (config_approvals.go): the entry's --writes and the harness's own
	// approval settings follow the same choice.
	writes := o.Writes
	if writes == "" {
		writes = defaultWrites(req.h.name)
	}
	if err := checkWrites(writes); err != nil {
		configFail(stderr, "%v", err)
		return nil, 2
	}
	req.entry.Args = stdioArgs(writes)
	if req.approvals != nil {
		req.approvals.policy = writes
	}
	return req, 0
}

// ConfigOptions are config's flags.
type ConfigOptions struct {
	Write, Force, NoApprovals                 bool
	Scope, StateDir, Port, Name, File, Writes string
	// flags is the set they were parsed from, to repeat the ones given in hints.
	flags *pflag.FlagSet
}

// BindConfigFlags declares config's flags on fs, bound to o.
func BindConfigFlags(fs *pflag.FlagSet, o *ConfigOptions) {
	o.flags = fs
	fs.BoolVar(&o.Write, "write", false, "merge the entry and approval settings into the harness's files")
	fs.BoolVar(&o.Force, "force", false, "with --write: replace a different existing entry of the same name, and approval settings that contradict resmon's tool table")
	fs.BoolVar(&o.NoApprovals, "no-approvals", false, "write only the server entry, none of the harness's approval settings")
	fs.StringVar(&o.Scope, "scope", "", "claude-code: 'project' (.mcp.json and .claude/settings.json, the default) or 'user' (~/.claude/settings.json; the entry goes in with 'claude mcp add --scope user')")
	fs.StringVar(&o.StateDir, "state-dir", "", "resmon state directory to pin (sets RESMON_STATE_DIR)")
	fs.StringVar(&o.Port, "port", "", "resmon backend port to pin (sets RESMON_PORT)")
	fs.StringVar(&o.Name, "name", "resmon", "the server's name in the harness")
	fs.StringVar(&o.File, "file", "", "config file to edit instead of the harness's default")
	fs.StringVar(&o.Writes, "writes", "", "who confirms each write: 'ask' (resmongw asks the person in the harness; the default), 'harness' (the harness's own prompt; the default for claude-desktop), 'off' (writes not offered)")
}

func buildConfigRequest(harnessName string, o ConfigOptions, stderr io.Writer) (*configRequest, int) {
	write, force, noApprovals, scope, stateDir, port, name, file := o.Write, o.Force, o.NoApprovals, o.Scope, o.StateDir, o.Port, o.Name, o.File
	h := findHarness(harnessName)
	if h == nil {
		fmt.Fprintf(stderr, "resmongw config: unknown harness %q\n\n%s", harnessName, configUsage)
		return nil, 2
	}
	req := &configRequest{h: h, name: name, write: write, force: force, scope: scope, flags: o.flags}
	// Bad flag values and combinations are usage errors (exit 2), like unknown flags.
	if !serverNameRE().MatchString(req.name) {
		configFail(stderr, "--name %q: use letters, digits, '_' and '-' only", req.name)
		return nil, 2
	}
	if !noApprovals {
		req.approvals = approvalsFromToolTable(writesAsk) // the policy is set by the caller
	}
	if err := req.checkScope(file); err != nil {
		configFail(stderr, "%v", err)
		return nil, 2
	}
	env, err := pinnedEnv(port, stateDir, stderr)
	if err != nil {
		configFail(stderr, "%v", err)
		return nil, 2
	}
	bin, err := binaryPath()
	if err != nil {
		return nil, configFail(stderr, "%v", err)
	}
	req.entry = jsonEntry{Command: bin, Args: []string{"stdio"}, Env: env}
	if h.withType {
		req.entry.Type = "stdio"
	}
	if req.home, err = paths.Home(os.Getenv); err != nil {
		return nil, configFail(stderr, "%v", err)
	}
	if err := req.resolveTarget(file); err != nil {
		return nil, configFail(stderr, "%v", err)
	}
	return req, 0
}

func findHarness(name string) *harness {
	for i := range harnesses {
		if harnesses[i].name == name {
			return &harnesses[i]
		}
	}
	return nil
}

func (r *configRequest) checkScope(file string) error {
	switch {
	case r.scope == "":
		if r.h.name == "claude-code" {
			r.scope = "project"
		}
	case r.h.name != "claude-code":
		return fmt.Errorf("--scope applies to claude-code only")
	case r.scope != "project" && r.scope != "user":
		return fmt.Errorf("--scope %q: use 'user' or 'project'", r.scope)
	case r.scope == "user" && file != "":
		return fmt.Errorf("--file: with --scope user the entry goes in through 'claude mcp add', so there is no entry file to name")
	case r.scope == "user" && r.approvals == nil:
		return fmt.Errorf("--scope user --write writes only approval rules; with --no-approvals there is nothing to write (run the 'claude mcp add' line instead)")
	}
	return nil
}

// pinnedEnv is the environment the entry pins: RESMON_PORT and RESMON_STATE_DIR (nil for none).
func pinnedEnv(port, stateDir string, stderr io.Writer) (map[string]string, error) {
	env := map[string]string{}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--port %q is not a port number (1-65535)", port)
		}
		env["RESMON_PORT"] = strconv.Itoa(n)
	}
	if stateDir != "" {
		abs, err := filepath.Abs(stateDir)
		if err != nil {
			return nil, fmt.Errorf("--state-dir: %v", err)
		}
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("--state-dir %s is not a directory", abs)
		} else if err != nil {
			fmt.Fprintf(stderr, "note: %s does not exist yet; resmon creates it when it first runs.\n", abs)
		}
		env["RESMON_STATE_DIR"] = abs
	}
	if len(env) == 0 {
		return nil, nil
	}
	return env, nil
}

func (r *configRequest) resolveTarget(file string) error {
	var err error
	switch {
	case r.scope == "user":
		r.target = ""
	case file != "":
		r.fileGiven = true
		r.target, err = filepath.Abs(file)
	default:
		r.target, err = r.h.file(r.home)
	}
	return err
}

// configSnippet is the entry as it would sit in the harness's file.
func configSnippet(h *harness, name string, e jsonEntry) string {
	if h.format == "toml" {
		return renderCodexTable(name, e)
	}
	return string(marshalPretty(map[string]any{"mcpServers": map[string]jsonEntry{name: e}}, "", "  ")) + "\n"
}

// configSnippetEntry is just the entry (without the mcpServers wrapper) for side-by-side display.
func configSnippetEntry(h *harness, name string, e jsonEntry) string {
	if h.format == "toml" {
		return renderCodexTable(name, e)
	}
	return string(marshalPretty(e, "", "  ")) + "\n"
}

// writeCommand is the command that writes what was just previewed: the same harness and flags,
// plus extra and --write, so following the hint literally writes what was shown.
func writeCommand(fs *pflag.FlagSet, harnessName string, extra ...string) string {
	parts := []string{"resmongw", "config", harnessName}
	if fs == nil {
		return strings.Join(append(append(parts, extra...), "--write"), " ")
	}
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "write", "scope":
			return
		case "force", "no-approvals":
			parts = append(parts, "--"+f.Name)
			return
		}
		v := f.Value.String()
		if v == "" || strings.ContainsAny(v, " \t'\"\\$`") {
			v = strconv.Quote(v)
		}
		parts = append(parts, "--"+f.Name, v)
	})
	parts = append(parts, extra...)
	return strings.Join(append(parts, "--write"), " ")
}

// claudeAddCommand is the `claude mcp add` line. -e goes after the name: the flag takes
// several values, and before the name it would swallow the name as one of them.
func claudeAddCommand(name string, e jsonEntry) string { return claudeAdd(name, e).String() }

func indentBlock(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ")
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
