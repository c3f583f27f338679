package packaging

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/toolfacts"
)

// fixtureOutputs are the written files of every fixture case that succeeded, with the case.
func fixtureOutputs(t *testing.T, file string) map[string]configCase {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join("testdata", "config", "*"))
	out := map[string]configCase{}
	for _, dir := range dirs {
		c := loadConfigCase(t, dir)
		if _, err := os.Stat(filepath.Join(dir, "want", file)); c.exit == 0 && err == nil {
			out[dir] = c
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixture writes %s", file)
	}
	return out
}

func caseName(c configCase) string {
	if i := slices.Index(c.args, "--name"); i >= 0 {
		return c.args[i+1]
	}
	return "resmon"
}

// Codex itself loads every config.toml the fixtures hold: `codex mcp get` finds the server,
// and Codex's app-server (config/read) reports each tool's approval_mode as the tool table
// and the entry's --writes say — read by Codex's own config loader, not ours.
func TestCodexLoadsEveryWrittenConfig(t *testing.T) {
	codex := testkit.HarnessCLI(t, "codex", "RESMONGW_TEST_CODEX", testkit.CodexInstall)
	for dir, c := range fixtureOutputs(t, ".codex/config.toml") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			home := testkit.ShortTempDir(t)
			codexHome := filepath.Join(home, ".codex")
			writeFile(t, filepath.Join(codexHome, "config.toml"), readFile(t, filepath.Join(dir, "want", ".codex", "config.toml")))
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + codexHome}
			name := caseName(c)
			ctx := testkit.Context(t, 2*time.Minute)

			get := exec.CommandContext(ctx, codex, "mcp", "get", name, "--json")
			get.Env = env
			out, err := get.Output()
			var server struct {
				Transport struct{ Command string } `json:"transport"`
			}
			if err != nil || json.Unmarshal(out, &server) != nil || server.Transport.Command != testBin {
				t.Fatalf("codex mcp get %s: %v\n%s", name, err, out)
			}

			raw, err := testkit.CodexAppServerCall(ctx, codex, env, "config/read", map[string]any{"includeLayers": false})
			if err != nil {
				t.Fatal(err)
			}
			var read struct {
				Config struct {
					MCPServers map[string]struct {
						Command string
						Tools   map[string]struct {
							ApprovalMode string `json:"approval_mode"`
						}
					} `json:"mcp_servers"`
				}
			}
			if err := json.Unmarshal(raw, &read); err != nil {
				t.Fatal(err)
			}
			srv := read.Config.MCPServers[name]
			if srv.Command != testBin {
				t.Fatalf("Codex reads mcp_servers.%s.command = %q", name, srv.Command)
			}
			if slices.Contains(c.args, "--no-approvals") {
				return
			}
			policy := defaultWrites(c.args[0])
			for _, a := range c.args {
				if v, ok := strings.CutPrefix(a, "--writes="); ok {
					policy = v
				}
			}
			for _, tool := range toolfacts.Rows {
				want := codexApprove
				if tool.RequiresConfirmation {
					// Codex adds no prompt of its own where resmongw asks; it asks under harness.
					want = map[string]string{writesAsk: codexApprove, writesHarness: codexPrompt}[policy]
				}
				if got := srv.Tools[tool.Name].ApprovalMode; got != want {
					t.Errorf("Codex reads %s approval_mode %q, want %q", tool.Name, got, want)
				}
			}
		})
	}
}

// Claude Code itself reads every settings file the fixtures hold without an "Invalid settings"
// finding (`claude doctor` validates each settings file), finds the project's server
// (`claude mcp get`), and — what the README tells people — ignores a project's allow rules
// until the folder is trusted, and applies them once it is.
func TestClaudeCodeReadsEveryWrittenSettingsFile(t *testing.T) {
	claude := testkit.HarnessCLI(t, "claude", "RESMONGW_TEST_CLAUDE", testkit.ClaudeInstall)
	cases := fixtureOutputs(t, "project/.claude/settings.json")
	for dir, c := range fixtureOutputs(t, ".claude/settings.json") {
		cases[dir] = c
	}
	for dir, c := range fixtureOutputs(t, "claude-cfg/settings.json") {
		cases[dir] = c
	}
	for dir, c := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			home := testkit.ShortTempDir(t)
			for rel, content := range treeFiles(t, filepath.Join(dir, "want")) {
				writeFile(t, filepath.Join(home, rel), content)
			}
			project := filepath.Join(home, "project")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
			stateDir := home
			for k, v := range c.env {
				v = strings.ReplaceAll(v, "$HOME", home)
				env = append(env, k+"="+v)
				if k == "CLAUDE_CONFIG_DIR" {
					stateDir = v
				}
			}
			ctx := testkit.Context(t, 2*time.Minute)
			run := func(args ...string) string {
				cmd := exec.CommandContext(ctx, claude, args...)
				cmd.Env, cmd.Dir = env, project
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			projectScope := slices.Contains(c.args, "--write") && !slices.Contains(c.args, "--scope")
			doctor := run("doctor")
			if strings.Contains(doctor, "Invalid settings") {
				t.Fatalf("claude doctor finds invalid settings:\n%s", doctor)
			}
			if !projectScope {
				return
			}
			if !strings.Contains(doctor, "permissions.allow") || !strings.Contains(doctor, "has not been trusted") {
				t.Errorf("an untrusted folder's allow rules are not reported as ignored; the README says they are:\n%s", doctor)
			}
			name := caseName(c)
			if got := run("mcp", "get", name); !strings.Contains(got, "Project config") || !strings.Contains(got, testBin) {
				t.Errorf("claude mcp get %s:\n%s", name, got)
			}
			// Trust the folder, as its trust dialog would: the allow rules now apply.
			trust, _ := json.Marshal(map[string]any{"projects": map[string]any{project: map[string]any{"hasTrustDialogAccepted": true}}})
			writeFile(t, filepath.Join(stateDir, ".claude.json"), string(trust))
			if doctor := run("doctor"); strings.Contains(doctor, "Ignoring") || strings.Contains(doctor, "Invalid settings") {
				t.Errorf("in a trusted folder claude doctor still ignores or rejects rules:\n%s", doctor)
			}
		})
	}
}
