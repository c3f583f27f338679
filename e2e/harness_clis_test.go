package e2e

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
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/tools"
)

// harnessHome is a short private home for one harness CLI test, with the daemon's socket
// pinned inside it (the shim would otherwise pick the login runtime directory, which the real
// user shares); the daemon a shim autostarts there is stopped when the test ends.
func harnessHome(t *testing.T) (home, socket string) {
	t.Helper()
	home = testkit.ShortTempDir(t)
	socket = filepath.Join(home, "run", "mcp.sock")
	t.Cleanup(func() {
		if pid, err := testkit.ReadPIDFile(paths.LockFile(socket)); err == nil && testkit.Alive(pid) {
			if err := testkit.StopPID(pid, testkit.WaitLimit); err != nil {
				t.Errorf("autostarted daemon: %v", err)
			}
		}
	})
	return home, socket
}

func runOK(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

// Codex starts resmongw from the config.toml `resmongw config codex --write` wrote and lists
// all 25 tools through the shim and the daemon it autostarts (Codex's app-server
// mcpServerStatus/list launches the configured servers).
func TestCodexStartsTheServerFromTheWrittenConfig(t *testing.T) {
	t.Parallel()
	codex := testkit.HarnessCLI(t, "codex", "RESMONGW_TEST_CODEX", testkit.CodexInstall)
	home, socket := harnessHome(t)
	codexHome := filepath.Join(home, ".codex")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + codexHome}
	ctx := testkit.Context(t, 3*time.Minute)

	cfg := exec.CommandContext(ctx, bin, "config", "codex", "--write")
	cfg.Env = env
	runOK(t, cfg)

	// Codex hands a server only its own env table and a few variables, so the socket pin
	// travels as a one-run override of that table, leaving the written file as it is.
	pin := `mcp_servers.resmon.env={RESMONGW_SOCKET=` + strconvQuote(socket) + `}`
	raw, err := testkit.CodexAppServerCall(ctx, codex, env, "mcpServerStatus/list", map[string]any{"detail": "toolsAndAuthOnly"}, "-c", pin)
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Data []struct {
			Name  string
			Tools map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range status.Data {
		if s.Name == "resmon" {
			for name := range s.Tools {
				got = append(got, name)
			}
		}
	}
	var want []string
	for _, tool := range tools.Tools {
		want = append(want, tool.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Codex lists resmon's tools %v, want %v\n%s", got, want, raw)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Claude Code starts resmongw after the person runs the `claude mcp add --scope user` line the
// preview prints, and reads the approval rules `--scope user --write` put in their settings.
func TestClaudeCodeStartsTheServerFromThePrintedCommand(t *testing.T) {
	t.Parallel()
	claude := testkit.HarnessCLI(t, "claude", "RESMONGW_TEST_CLAUDE", testkit.ClaudeInstall)
	home, socket := harnessHome(t)
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, paths.SocketEnv + "=" + socket}
	ctx := testkit.Context(t, 3*time.Minute)
	cmd := func(name string, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, name, args...)
		c.Env, c.Dir = env, project
		return c
	}

	var line string
	for _, l := range strings.Split(runOK(t, cmd(bin, "config", "claude-code")), "\n") {
		if strings.HasPrefix(l, "  claude mcp add ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatal("the preview prints no claude mcp add line")
	}
	runOK(t, cmd("sh", "-c", line))
	runOK(t, cmd(bin, "config", "claude-code", "--scope", "user", "--write"))

	got := runOK(t, cmd(claude, "mcp", "get", "resmon"))
	if !strings.Contains(got, "User config") || !strings.Contains(got, "Connected") || !strings.Contains(got, bin) {
		t.Fatalf("claude mcp get resmon:\n%s", got)
	}
	if doctor := runOK(t, cmd(claude, "doctor")); strings.Contains(doctor, "Invalid settings") {
		t.Fatalf("claude doctor rejects the settings resmongw wrote:\n%s", doctor)
	}
	settings, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), `"mcp__resmon__update_settings"`) {
		t.Fatalf("user settings: %v\n%s", err, settings)
	}
}
