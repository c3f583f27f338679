package packaging

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const testBin = "/opt/resmon/bin/resmongw"

// configEnv gives each test its own HOME and working directory, a fixed binary path and a
// fixed clock for backup names.
func configEnv(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	work := filepath.Join(home, "project")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	oldExe, oldNow, oldClaude := executable, now, lookClaude
	executable = func() (string, error) { return testBin, nil }
	now = func() time.Time { return time.Date(2026, 10, 1, 12, 30, 45, 0, time.UTC) }
	lookClaude = func() (string, error) { return "", os.ErrNotExist } // the claude CLI only where a test puts one
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Cleanup(func() { executable, now, lookClaude = oldExe, oldNow, oldClaude })
	return home
}

func runCfg(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// The command line as cobra parses it for `resmongw config` (flags before and after the
	// harness); its usage errors are cobra's, tested in cmd/resmongw.
	var opts ConfigOptions
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	BindConfigFlags(fs, &opts)
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		t.Fatalf("%q: %v, arguments %q: not a command line cobra accepts", args, err, fs.Args())
	}
	var o, e bytes.Buffer
	code = ConfigMain(fs.Arg(0), opts, &o, &e)
	return code, o.String(), e.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const cursorFixture = `{
  // Cursor MCP servers
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"], // pinned
    },
  },
  /* other settings */
  "telemetry": false
}
`

const cursorMerged = `{
  // Cursor MCP servers
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"], // pinned
    },
    "resmon": {
      "command": "/opt/resmon/bin/resmongw",
      "args": [
        "stdio"
      ],
      "env": {
        "RESMON_PORT": "8791"
      }
    }
  },
  /* other settings */
  "telemetry": false
}
`

func TestConfigMergesIntoCommentedJSON(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, file, cursorFixture)

	code, out, errOut := runCfg(t, "cursor", "--write", "--port", "8791")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := readFile(t, file); got != cursorMerged {
		t.Fatalf("merged file:\n%s\nwant:\n%s", got, cursorMerged)
	}
	bak := backups(t, file)
	if len(bak) != 1 || filepath.Base(bak[0]) != "mcp.json.bak-20261001-123045" {
		t.Fatalf("backups = %q", bak)
	}
	if got := readFile(t, bak[0]); got != cursorFixture {
		t.Errorf("backup differs from the original:\n%s", got)
	}
	if !strings.Contains(out, "backup: "+bak[0]) || !strings.Contains(out, "added mcpServers.resmon to "+file) {
		t.Errorf("output:\n%s", out)
	}

	// Same entry again: nothing written, no second backup.
	code, out, _ = runCfg(t, "--port", "8791", "cursor", "--write")
	if code != 0 || !strings.Contains(out, "already configured") {
		t.Fatalf("re-run: exit %d\n%s", code, out)
	}
	if got := readFile(t, file); got != cursorMerged {
		t.Error("an identical re-run changed the file")
	}
	if n := len(backups(t, file)); n != 1 {
		t.Errorf("an identical re-run made a backup (%d backups)", n)
	}
}

func TestConfigRefusesADifferentEntryWithoutForce(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	original := `{
  "mcpServers": {
    "resmon": {"command": "/old/resmon-mcp", "env": {"API_KEY": "sk-live-abcdef"}},
    "github": {"command": "npx"}
  }
}
`
	writeFile(t, file, original)
	code, out, errOut := runCfg(t, "cursor", "--write")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if readFile(t, file) != original || len(backups(t, file)) != 0 {
		t.Fatal("a refused write touched the file or made a backup")
	}
	for _, s := range []string{"/old/resmon-mcp", testBin, "--force"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("refusal does not show %q:\n%s", s, errOut)
		}
	}
	if strings.Contains(errOut, "sk-live-abcdef") {
		t.Errorf("refusal echoed another server's secret:\n%s", errOut)
	}

	code, out, errOut = runCfg(t, "cursor", "--write", "--force")
	if code != 0 || !strings.Contains(out, "replaced mcpServers.resmon") {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errOut)
	}
	want := `{
  "mcpServers": {
    "resmon": {
      "command": "/opt/resmon/bin/resmongw",
      "args": [
        "stdio"
      ]
    },
    "github": {"command": "npx"}
  }
}
`
	if got := readFile(t, file); got != want {
		t.Fatalf("after --force:\n%s\nwant:\n%s", got, want)
	}
	if bak := backups(t, file); len(bak) != 1 || readFile(t, bak[0]) != original {
		t.Errorf("--force did not back up the original: %q", bak)
	}
}

func TestConfigCreatesMissingFileAndDirectory(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	code, out, errOut := runCfg(t, "claude-desktop", "--write", "--state-dir", "../st")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	stateDir := filepath.Join(home, "st") // relative to the working directory, made absolute
	want := `{
  "mcpServers": {
    "resmon": {
      "command": "/opt/resmon/bin/resmongw",
      "args": [
        "stdio",
        "--writes=harness"
      ],
      "env": {
        "RESMON_STATE_DIR": "` + stateDir + `"
      }
    }
  }
}
`
	if got := readFile(t, file); got != want {
		t.Fatalf("created file:\n%s\nwant:\n%s", got, want)
	}
	fi, _ := os.Stat(file)
	di, _ := os.Stat(filepath.Dir(file))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %v, dir %v; want 0600, 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	if len(backups(t, file)) != 0 || !strings.Contains(out, "created "+file) {
		t.Errorf("a new file got a backup, or output is wrong:\n%s", out)
	}
	if !strings.Contains(errOut, "does not exist yet") {
		t.Errorf("no note about the missing state dir: %q", errOut)
	}
}

func TestConfigClaudeCode(t *testing.T) {
	home := configEnv(t)
	code, out, errOut := runCfg(t, "claude-code", "--port", "8791", "--state-dir", "/srv/resmon state")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	wantCmd := "claude mcp add --scope user resmon -e RESMON_PORT=8791 -e 'RESMON_STATE_DIR=/srv/resmon state' -- /opt/resmon/bin/resmongw stdio"
	if !strings.Contains(out, "\n  "+wantCmd+"\n") {
		t.Errorf("preview lacks %q:\n%s", wantCmd, out)
	}
	mcp := filepath.Join(home, "project", ".mcp.json")
	if _, err := os.Stat(mcp); !os.IsNotExist(err) {
		t.Fatal("a preview wrote .mcp.json")
	}
	if code, out, errOut := runCfg(t, "claude-code", "--write"); code != 0 {
		t.Fatalf("--write: exit %d\n%s%s", code, out, errOut)
	}
	want := `{
  "mcpServers": {
    "resmon": {
      "type": "stdio",
      "command": "/opt/resmon/bin/resmongw",
      "args": [
        "stdio"
      ]
    }
  }
}
`
	if got := readFile(t, mcp); got != want {
		t.Fatalf(".mcp.json:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(mcp); fi.Mode().Perm() != 0o644 {
		t.Errorf(".mcp.json mode %v, want 0644 (it is meant to be shared)", fi.Mode().Perm())
	}
}

const codexFixture = `# Codex settings
model = "o3"

[mcp_servers.other]
command = "other-mcp"
args = [
  "--flag", # why
  "[not a header]",
]

[mcp_servers.resmon]
command = "/old/resmongw"
args = ["stdio"]

[mcp_servers.resmon.env]
RESMON_PORT = "9000"

# profiles follow
[profiles.fast]
model = "o4-mini"
`

const codexMerged = `# Codex settings
model = "o3"

[mcp_servers.other]
command = "other-mcp"
args = [
  "--flag", # why
  "[not a header]",
]

[mcp_servers.resmon]
command = "/opt/resmon/bin/resmongw"
args = ["stdio"]
env = { RESMON_PORT = "8791" }
startup_timeout_sec = 30

# profiles follow
[profiles.fast]
model = "o4-mini"
`

func TestConfigCodexReplacesOnlyItsTable(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".codex", "config.toml")
	writeFile(t, file, codexFixture)
	if code, _, errOut := runCfg(t, "codex", "--write", "--no-approvals", "--port", "8791"); code != 1 || !strings.Contains(errOut, `RESMON_PORT = "9000"`) {
		t.Fatalf("a different table was not refused: exit %d\n%s", code, errOut)
	}
	if readFile(t, file) != codexFixture {
		t.Fatal("refused write changed the file")
	}
	code, out, errOut := runCfg(t, "codex", "--write", "--no-approvals", "--force", "--port", "8791")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := readFile(t, file); got != codexMerged {
		t.Fatalf("merged:\n%s\nwant:\n%s", got, codexMerged)
	}
	if bak := backups(t, file); len(bak) != 1 || readFile(t, bak[0]) != codexFixture {
		t.Errorf("backup: %q", bak)
	}
	code, out, _ = runCfg(t, "codex", "--write", "--no-approvals", "--port", "8791")
	if code != 0 || !strings.Contains(out, "already configured") || readFile(t, file) != codexMerged {
		t.Errorf("re-run: exit %d\n%s", code, out)
	}
}

func TestConfigCodexAppendsAndCreates(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".codex", "config.toml")
	// No file yet: created with just our table.
	if code, out, errOut := runCfg(t, "codex", "--write", "--no-approvals"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	table := "[mcp_servers.resmon]\ncommand = \"/opt/resmon/bin/resmongw\"\nargs = [\"stdio\"]\nstartup_timeout_sec = 30\n"
	if got := readFile(t, file); got != table {
		t.Fatalf("created:\n%s", got)
	}
	// An existing file without the table, not ending in a newline: appended after a blank line.
	writeFile(t, file, "model = \"o3\" # mine\n\n[tui]\nnotifications = true")
	if code, out, errOut := runCfg(t, "codex", "--write", "--no-approvals"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got, want := readFile(t, file), "model = \"o3\" # mine\n\n[tui]\nnotifications = true\n\n"+table; got != want {
		t.Fatalf("appended:\n%q\nwant:\n%q", got, want)
	}
}

func TestConfigCodexRefusesFormsItCannotEdit(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".codex", "config.toml")
	for _, src := range []string{
		"mcp_servers.resmon.command = \"x\"\n",
		"[mcp_servers]\nresmon = { command = \"x\" }\n",
		"mcp_servers = { other = { command = \"y\" } }\n",
		"[mcp_servers.other]\nargs = [\n",
		"[mcp_servers.resmon]\ncommand = \"x\"\n[mcp_servers.resmon.tools]\nhealth = { approval_mode = \"approve\" }\n",
		"[mcp_servers.resmon]\ncommand = \"x\"\ntools.health.approval_mode = \"approve\"\n",
		"[mcp_servers.resmon]\ncommand = \"x\"\n[mcp_servers.resmon]\nargs = []\n", // a table defined twice
		"[[mcp_servers.resmon]]\ncommand = \"x\"\n",
		"[[mcp_servers]]\nname = \"x\"\n",
	} {
		writeFile(t, file, src)
		code, _, errOut := runCfg(t, "codex", "--write", "--force")
		if code != 1 || readFile(t, file) != src {
			t.Errorf("%q: exit %d (want 1), file changed: %v\n%s", src, code, readFile(t, file) != src, errOut)
		}
		if !strings.Contains(errOut, "line ") {
			t.Errorf("%q: the refusal does not say where: %s", src, errOut)
		}
	}
}

func TestConfigFlagValidation(t *testing.T) {
	home := configEnv(t)
	notDir := filepath.Join(home, "file")
	writeFile(t, notDir, "x")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"vscode"}, 2, "unknown harness"},
		{[]string{"cursor", "--port", "99999"}, 2, "not a port"},
		{[]string{"cursor", "--port", "abc"}, 2, "not a port"},
		{[]string{"cursor", "--state-dir", notDir}, 2, "not a directory"},
		{[]string{"cursor", "--name", "res mon"}, 2, "--name"},
	} {
		code, _, errOut := runCfg(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%q: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, errOut, tc.msg)
		}
	}
}

func TestConfigNeverWritesAToken(t *testing.T) {
	home := configEnv(t)
	const token = "Zm9vYmFyYmF6cXV4cXV1eHh5enp5MTIzNDU2Nzg5MDEyMzQ1Ng" // 50 chars, token-shaped
	stateDir := filepath.Join(home, "state")
	writeFile(t, filepath.Join(stateDir, "api-token-8791"), token)
	t.Setenv("RESMON_API_TOKEN", token)
	for _, h := range []string{"claude-code", "codex", "cursor", "claude-desktop"} {
		for _, write := range []bool{false, true} {
			args := []string{h, "--port", "8791", "--state-dir", stateDir}
			if write {
				args = append(args, "--write")
			}
			code, out, errOut := runCfg(t, args...)
			if code != 0 {
				t.Fatalf("%q: exit %d\n%s%s", args, code, out, errOut)
			}
			if strings.Contains(out+errOut, token) {
				t.Errorf("%q printed the token", args)
			}
		}
	}
	files := []string{
		filepath.Join(home, "project", ".mcp.json"),
		filepath.Join(home, ".codex", "config.toml"),
		filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
	}
	for _, f := range files {
		got := readFile(t, f)
		if strings.Contains(got, token) {
			t.Errorf("%s holds the token", f)
		}
		if m := findTokenShaped([]byte(got), nil); m != "" {
			t.Errorf("%s holds a token-shaped string %q", f, m)
		}
		if !strings.Contains(got, "RESMON_STATE_DIR") || !strings.Contains(got, "8791") {
			t.Errorf("%s lacks the pinned env:\n%s", f, got)
		}
	}
}

func TestConfigEditsTheFileBehindASymlink(t *testing.T) {
	home := configEnv(t)
	real := filepath.Join(home, "dotfiles", "cursor-mcp.json")
	writeFile(t, real, "{}\n")
	link := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCfg(t, "cursor", "--write"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if got := readFile(t, real); !strings.Contains(got, `"command": "/opt/resmon/bin/resmongw"`) {
		t.Errorf("the real file was not updated:\n%s", got)
	}
}

func TestConfigFileFlagAndJSONLayouts(t *testing.T) {
	configEnv(t)
	for _, tc := range []struct{ name, src, want string }{
		{"tabs, no mcpServers", "{\n\t\"theme\": 1\n}\n",
			"{\n\t\"theme\": 1,\n\t\"mcpServers\": {\n\t\t\"resmon\": {\n\t\t\t\"command\": \"/opt/resmon/bin/resmongw\",\n\t\t\t\"args\": [\n\t\t\t\t\"stdio\"\n\t\t\t]\n\t\t}\n\t}\n}\n"},
		{"empty file", "", "{\n  \"mcpServers\": {\n    \"resmon\": {\n      \"command\": \"/opt/resmon/bin/resmongw\",\n      \"args\": [\n        \"stdio\"\n      ]\n    }\n  }\n}\n"},
	} {
		file := filepath.Join(t.TempDir(), "custom.json")
		writeFile(t, file, tc.src)
		if code, out, errOut := runCfg(t, "cursor", "--write", "--file", file); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", tc.name, code, out, errOut)
		}
		if got := readFile(t, file); got != tc.want {
			t.Errorf("%s:\n%q\nwant:\n%q", tc.name, got, tc.want)
		}
	}
	file := filepath.Join(t.TempDir(), "bad.json")
	writeFile(t, file, "[1, 2]")
	if code, _, _ := runCfg(t, "cursor", "--write", "--file", file); code != 1 || readFile(t, file) != "[1, 2]" {
		t.Errorf("a non-object config was not refused (exit %d)", code)
	}
}

func TestTokenGuardAndDisplayRedaction(t *testing.T) {
	const token = "Zm9vYmFyYmF6cXV4cXV1eHh5enp5MTIzNDU2Nzg5MDEyMzQ1Ng"
	if findTokenShaped([]byte(`{"env": {"X": "`+token+`"}}`), nil) != token {
		t.Error("a token-shaped value was not caught")
	}
	if findTokenShaped([]byte(`{"env": {"X": "`+token+`"}}`), []byte(token)) != "" {
		t.Error("a value the user's file already held was blamed on us")
	}
	shown := redactForDisplay(`{"env": {"ANTHROPIC_API_KEY": "sk-1", "OTHER": "` + token + `"}, "command": "/a/b"}`)
	if strings.Contains(shown, "sk-1") || strings.Contains(shown, token) || !strings.Contains(shown, "/a/b") {
		t.Errorf("redacted display: %s", shown)
	}
}
