package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The preview's "--write" hint repeats the flags that shaped the preview, so running the hint
// literally writes the entry that was shown (not a plain `resmon` entry without the pins).
func TestConfigWriteHintKeepsTheFlags(t *testing.T) {
	home := configEnv(t)
	state := filepath.Join(home, "state dir")
	code, out, errOut := runCfg(t, "codex", "--name", "lab", "--port", "9000", "--state-dir", state)
	if code != 0 {
		t.Fatalf("preview: code %d, %s", code, errOut)
	}
	want := `'resmongw config codex --name lab --port 9000 --state-dir "` + state + `" --write'`
	if !strings.Contains(out, want) {
		t.Fatalf("hint missing %s in:\n%s", want, out)
	}
	// Following the hint (the same flags plus --write) writes the previewed table.
	code, _, errOut = runCfg(t, "codex", "--name", "lab", "--port", "9000", "--state-dir", state, "--write")
	if code != 0 {
		t.Fatalf("write: code %d, %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"[mcp_servers.lab]", `RESMON_PORT = "9000"`, "RESMON_STATE_DIR"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("written config lacks %s:\n%s", s, b)
		}
	}
	code, out, _ = runCfg(t, "claude-code", "--port", "9000")
	if code != 0 || !strings.Contains(out, "'resmongw config claude-code --port 9000 --write'") {
		t.Errorf("claude-code hint: code %d\n%s", code, out)
	}
}
