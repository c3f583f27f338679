package packaging

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/tailscale/hujson"
)

var updateFixtures = flag.Bool("update", false, "rewrite the golden files of testdata/config from what resmongw config does now")

// configCase is one directory of testdata/config: case.txt (args, exit code, environment),
// in/ (files laid into a fresh HOME before the run), want/ (every file under HOME after the
// run, byte for byte) and the run's stdout and stderr, with $HOME for the home directory.
type configCase struct {
	dir  string
	args []string
	exit int
	env  map[string]string
}

func loadConfigCase(t *testing.T, dir string) configCase {
	t.Helper()
	c := configCase{dir: dir, env: map[string]string{}}
	for _, line := range strings.Split(readFile(t, filepath.Join(dir, "case.txt")), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		switch {
		case !ok:
		case k == "args":
			c.args = strings.Fields(v)
		case k == "exit":
			c.exit, _ = strconv.Atoi(v)
		case k == "env":
			ek, ev, _ := strings.Cut(v, "=")
			c.env[ek] = ev
		}
	}
	return c
}

// treeFiles maps every regular file under root (relative, slash-separated) to its content;
// backups are left out (they are checked on their own).
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return files
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(d.Name(), ".bak-") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestConfigFixtures runs `resmongw config` over every case in testdata/config and compares
// every file it leaves, its stdout and its stderr byte for byte; then checks that the files
// still parse in the harness's own format, and that a second run changes nothing.
func TestConfigFixtures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "config", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		dir, _ := filepath.Abs(dir) // the run changes the working directory
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := loadConfigCase(t, dir)
			home := configEnv(t)
			for k, v := range c.env {
				t.Setenv(k, strings.ReplaceAll(v, "$HOME", home))
			}
			in := treeFiles(t, filepath.Join(dir, "in"))
			for rel, content := range in {
				writeFile(t, filepath.Join(home, rel), content)
			}
			code, out, errOut := runCfg(t, c.args...)
			got := treeFiles(t, home)
			stdout, stderr := strings.ReplaceAll(out, home, "$HOME"), strings.ReplaceAll(errOut, home, "$HOME")
			if *updateFixtures {
				writeGolden(t, dir, got, stdout, stderr)
				return
			}
			if code != c.exit {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.exit, out, errOut)
			}
			compareGolden(t, filepath.Join(dir, "stdout.golden"), stdout)
			compareGolden(t, filepath.Join(dir, "stderr.golden"), stderr)
			want := treeFiles(t, filepath.Join(dir, "want"))
			for rel := range union(got, want) {
				if got[rel] != want[rel] {
					t.Errorf("%s:\n%s\nwant:\n%s", rel, got[rel], want[rel])
				}
			}
			checkBackups(t, home, in, got)
			checkParsesInHarnessFormat(t, home, got, c)
			switch {
			case !slices.Contains(c.args, "--write"): // a preview writes nothing
				for rel := range union(in, got) {
					if in[rel] != got[rel] {
						t.Errorf("the preview touched %s", rel)
					}
				}
			case code == 0:
				checkSecondRunChangesNothing(t, home, c, got)
			}
		})
	}
}

func union(a, b map[string]string) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s:\n%s\nwant:\n%s", filepath.Base(path), got, want)
	}
}

func writeGolden(t *testing.T, dir string, got map[string]string, stdout, stderr string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, "want")); err != nil {
		t.Fatal(err)
	}
	for rel, content := range got {
		writeFile(t, filepath.Join(dir, "want", rel), content)
	}
	for name, content := range map[string]string{"stdout.golden": stdout, "stderr.golden": stderr} {
		p := filepath.Join(dir, name)
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkBackups: every changed file has exactly one backup holding its old content; an
// unchanged one has none.
func checkBackups(t *testing.T, home string, in, got map[string]string) {
	t.Helper()
	for rel, before := range in {
		bak := backups(t, filepath.Join(home, rel))
		switch {
		case got[rel] == before && len(bak) != 0:
			t.Errorf("%s did not change but was backed up: %q", rel, bak)
		case got[rel] != before && (len(bak) != 1 || readFile(t, bak[0]) != before):
			t.Errorf("%s changed; backups %q do not hold exactly its old content", rel, bak)
		}
	}
}

// checkParsesInHarnessFormat reads every file the run left back with the harness's own format:
// TOML through go-toml's decoder, JSON(C) through hujson and encoding/json, and checks the
// approval settings say what the tool table says.
func checkParsesInHarnessFormat(t *testing.T, home string, got map[string]string, c configCase) {
	t.Helper()
	name := "resmon"
	if i := slices.Index(c.args, "--name"); i >= 0 {
		name = c.args[i+1]
	}
	approvals := !slices.Contains(c.args, "--no-approvals") && c.exit == 0 && slices.Contains(c.args, "--write")
	policy := defaultWrites(c.args[0])
	for _, a := range c.args {
		if v, ok := strings.CutPrefix(a, "--writes="); ok {
			policy = v
		}
	}
	for rel, content := range got {
		switch {
		case strings.HasSuffix(rel, ".toml"):
			var doc map[string]any
			if err := toml.Unmarshal([]byte(content), &doc); err != nil {
				t.Errorf("%s does not parse as TOML: %v", rel, err)
				continue
			}
			if approvals && rel == ".codex/config.toml" {
				checkCodexModes(t, doc, name, policy)
			}
		case strings.HasSuffix(rel, ".json"):
			std, err := hujson.Standardize([]byte(content))
			var doc map[string]any
			if err == nil {
				err = json.Unmarshal(std, &doc)
			}
			if err != nil {
				t.Errorf("%s does not parse as JSON: %v", rel, err)
				continue
			}
			if approvals && strings.HasSuffix(rel, ".claude/settings.json") {
				checkClaudeRules(t, rel, doc, name, policy)
			}
		}
	}
}

// checkCodexModes: reads "approve"; writes "approve" under ask (the gateway asks, Codex must
// not ask again), "prompt" under harness; under off a write's mode is not checked.
func checkCodexModes(t *testing.T, doc map[string]any, name, policy string) {
	t.Helper()
	servers, _ := doc["mcp_servers"].(map[string]any)
	server, _ := servers[name].(map[string]any)
	modes, _ := server["tools"].(map[string]any)
	if args, _ := server["args"].([]any); policy != writesAsk && !slices.Contains(args, any("--writes="+policy)) {
		t.Errorf("codex: mcp_servers.%s.args = %v, want --writes=%s", name, args, policy)
	}
	for _, tool := range toolfacts.Rows {
		want := codexApprove
		if tool.RequiresConfirmation {
			want = map[string]string{writesAsk: codexApprove, writesHarness: codexPrompt}[policy]
		}
		if want == "" {
			continue
		}
		if m, _ := modes[tool.Name].(map[string]any); m["approval_mode"] != want {
			t.Errorf("codex: mcp_servers.%s.tools.%s.approval_mode = %v, want %q", name, tool.Name, m["approval_mode"], want)
		}
	}
}

// checkClaudeRules: reads allowed; writes allowed under ask (the gateway asks, so Claude Code
// must not), named by no rule under harness or off (Claude Code asks, and its "don't ask
// again" works); nothing resmon offers asks or is denied.
func checkClaudeRules(t *testing.T, rel string, doc map[string]any, name, policy string) {
	t.Helper()
	perms, _ := doc["permissions"].(map[string]any)
	list := func(k string) []string {
		var out []string
		raw, _ := perms[k].([]any)
		for _, r := range raw {
			s, _ := r.(string)
			out = append(out, s)
		}
		return out
	}
	allow, ask, deny := list("allow"), list("ask"), list("deny")
	for _, tool := range toolfacts.Rows {
		rule := claudeToolRule(name, tool.Name)
		if tool.RequiresConfirmation && (slices.Contains(ask, rule) || slices.Contains(allow, rule) != (policy == writesAsk)) {
			t.Errorf("%s: write %s: allowed %v, asks %v; want allowed only under --writes=ask (here %s), never an ask rule",
				rel, rule, slices.Contains(allow, rule), slices.Contains(ask, rule), policy)
		}
		if !tool.RequiresConfirmation && (!slices.Contains(allow, rule) || slices.Contains(ask, rule) || slices.Contains(deny, rule)) {
			t.Errorf("%s: read %s is not an allow rule (or also asks/denies)", rel, rule)
		}
	}
}

// checkSecondRunChangesNothing runs the same command again: every file stays byte-identical,
// no backup is made, and each file is reported as already configured.
func checkSecondRunChangesNothing(t *testing.T, home string, c configCase, first map[string]string) {
	t.Helper()
	baks := map[string]int{}
	for rel := range first {
		baks[rel] = len(backups(t, filepath.Join(home, rel)))
	}
	code, out, errOut := runCfg(t, c.args...)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", code, out, errOut)
	}
	again := treeFiles(t, home)
	for rel := range union(first, again) {
		if first[rel] != again[rel] {
			t.Errorf("second run changed %s:\n%s", rel, again[rel])
		}
		if n := len(backups(t, filepath.Join(home, rel))); n != baks[rel] {
			t.Errorf("second run backed up %s", rel)
		}
	}
	if strings.Contains(out, "backup:") || strings.Contains(out, "created ") || strings.Contains(out, "Restart") {
		t.Errorf("second run reports a change:\n%s", out)
	}
	if !strings.Contains(out, "already configured") {
		t.Errorf("second run does not say already configured:\n%s", out)
	}
}
