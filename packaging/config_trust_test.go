//go:build linux || darwin

package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// writerCase is one harness writer and where its entry file is, for the tests every writer
// must pass.
type writerCase struct {
	harness string
	file    func(home string) string // the entry file with default flags
	content string                   // a valid file of the harness's format without our entry
}

var writerCases = []writerCase{
	{"claude-code", func(home string) string { return filepath.Join(home, "project", ".mcp.json") }, "{\n  \"mcpServers\": {}\n}\n"},
	{"codex", func(home string) string { return filepath.Join(home, ".codex", "config.toml") }, "model = \"o3\"\n"},
	{"cursor", func(home string) string { return filepath.Join(home, ".cursor", "mcp.json") }, "{\n  \"mcpServers\": {}\n}\n"},
	{"claude-desktop", func(home string) string {
		return filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	}, "{\n  \"mcpServers\": {}\n}\n"},
}

// snapshot is every file under root with its content, backups and temp files included.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			files[p] = "link to " + l
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p := range union(before, after) {
		if before[p] != after[p] {
			t.Errorf("%s: %s changed:\n%q\nnow:\n%q", what, p, before[p], after[p])
		}
	}
}

// Another user plants a link in a directory both can write, pointing at the victim's own
// config; the victim runs config --write there. Nothing of the victim's changes, nothing is
// written where the link points, and the refusal names the link. For every writer.
func TestConfigWriteNeverFollowsAnotherUsersLink(t *testing.T) {
	for _, sticky := range []bool{true, false} {
		for _, wc := range writerCases {
			name := wc.harness + "/shared"
			mode := os.FileMode(0o777)
			if sticky {
				name, mode = wc.harness+"/sticky", os.ModeSticky|0o777
			}
			t.Run(name, func(t *testing.T) {
				home := configEnv(t)
				shared := testkit.SharedDir(t, mode)
				var args []string
				var planted string
				switch wc.harness {
				case "claude-code": // the project directory is shared; .claude points at the victim's
					writeFile(t, filepath.Join(home, ".claude", "settings.json"), "{}\n")
					planted = filepath.Join(shared, ".claude")
					testkit.RunAsOtherUser(t, "ln", "-s", filepath.Join(home, ".claude"), planted)
					t.Chdir(shared)
				case "codex": // CODEX_HOME names a shared place where .codex points at the victim's
					writeFile(t, wc.file(home), wc.content)
					planted = filepath.Join(shared, ".codex")
					testkit.RunAsOtherUser(t, "ln", "-s", filepath.Join(home, ".codex"), planted)
					t.Setenv("CODEX_HOME", planted)
				case "cursor": // --file names a file in a shared directory, a link to the victim's
					writeFile(t, wc.file(home), wc.content)
					planted = filepath.Join(shared, "mcp.json")
					testkit.RunAsOtherUser(t, "ln", "-s", wc.file(home), planted)
					args = append(args, "--file", planted)
				case "claude-desktop": // XDG_CONFIG_HOME is shared; Claude points at the victim's
					writeFile(t, wc.file(home), wc.content)
					planted = filepath.Join(shared, "Claude")
					testkit.RunAsOtherUser(t, "ln", "-s", filepath.Join(home, ".config", "Claude"), planted)
					t.Setenv("XDG_CONFIG_HOME", shared)
				}
				before, sharedBefore := snapshot(t, home), snapshot(t, shared)
				code, out, errOut := runCfg(t, append([]string{wc.harness, "--write"}, args...)...)
				if code != 1 {
					t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
				}
				sameFiles(t, "the victim's files", before, snapshot(t, home))
				sameFiles(t, "the shared directory", sharedBefore, snapshot(t, shared))
				if sticky && !strings.Contains(errOut, planted+" is a symbolic link that belongs to another user") {
					t.Errorf("the refusal does not name the planted link:\n%s", errOut)
				}
				if !sticky && !strings.Contains(errOut, shared+" is a directory that is writable by other users") {
					t.Errorf("the refusal does not name the shared directory:\n%s", errOut)
				}
				if strings.Contains(errOut, "chmod") && !strings.Contains(errOut, "if nobody else needs to write") {
					t.Errorf("advises a chmod of a shared directory:\n%s", errOut)
				}
			})
		}
	}
}

// A file changed by another program between resmongw's read and its replace keeps what that
// program wrote: nothing is lost, no backup or temp file is left, the exit is 1 and the
// message says to run again; run again, the entry is merged into the new content.
func TestConfigWriteKeepsAConcurrentEdit(t *testing.T) {
	for _, wc := range writerCases {
		t.Run(wc.harness, func(t *testing.T) {
			home := configEnv(t)
			file := wc.file(home)
			writeFile(t, file, wc.content)
			edited := strings.Replace(wc.content, "{}", `{"other": {"command": "/bin/other"}}`, 1)
			if wc.harness == "codex" {
				edited = wc.content + "\n[mcp_servers.other]\ncommand = \"/bin/other\"\n"
			}
			old := beforeReplace
			t.Cleanup(func() { beforeReplace = old })
			beforeReplace = func(path string) {
				if path == file {
					if err := os.WriteFile(file, []byte(edited), 0o600); err != nil {
						t.Error(err)
					}
				}
			}
			code, out, errOut := runCfg(t, wc.harness, "--write", "--no-approvals")
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			if got := readFile(t, file); got != edited {
				t.Fatalf("the concurrent edit was lost:\n%s", got)
			}
			if !strings.Contains(errOut, file+" changed while resmongw was editing it") || !strings.Contains(errOut, "Run the command again") {
				t.Errorf("message:\n%s", errOut)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*tmp-*"))
			if b := backups(t, file); len(b)+len(left) != 0 {
				t.Errorf("left behind: %q %q", b, left)
			}
			beforeReplace = old
			if code, out, errOut := runCfg(t, wc.harness, "--write", "--no-approvals"); code != 0 {
				t.Fatalf("run again: exit %d\n%s%s", code, out, errOut)
			}
			if got := readFile(t, file); !strings.Contains(got, "/bin/other") || !strings.Contains(got, testBin) {
				t.Errorf("run again did not merge into the new content:\n%s", got)
			}
		})
	}
}

// A read-only file is refused with a clear message and exit 1, and left as it is.
func TestConfigWriteRefusesReadOnlyFiles(t *testing.T) {
	for _, wc := range writerCases {
		t.Run(wc.harness, func(t *testing.T) {
			home := configEnv(t)
			file := wc.file(home)
			writeFile(t, file, wc.content)
			if err := os.Chmod(file, 0o444); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, home)
			code, out, errOut := runCfg(t, wc.harness, "--write")
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			sameFiles(t, "after the refusal", before, snapshot(t, home))
			want := file + " is read-only (mode 0444), so resmongw leaves it alone; nothing was written. To let resmongw edit it, make it writable (chmod u+w " + file + ") and run again"
			if !strings.Contains(errOut, want) {
				t.Errorf("message:\n%s\nwant %q", errOut, want)
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o444 {
				t.Errorf("mode now %v", fi.Mode().Perm())
			}
		})
	}
}

// --file never creates the directories it names; a harness's own directory is created.
func TestConfigFileDirectoryMustExist(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, "nowhere", "deeper", "mcp.json")
	code, out, errOut := runCfg(t, "cursor", "--write", "--no-approvals", "--file", file)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "nowhere")); !os.IsNotExist(err) {
		t.Fatal("--file created a directory")
	}
	dir := filepath.Dir(file)
	if !strings.Contains(errOut, "the directory "+dir+" does not exist, and resmongw does not create the directories --file names; create it (mkdir -p "+dir+")") {
		t.Errorf("message:\n%s", errOut)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCfg(t, "cursor", "--write", "--no-approvals", "--file", file); code != 0 || !strings.Contains(out, "created "+file) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// An empty file gets no backup: there is nothing in it to keep.
func TestConfigNoBackupOfAnEmptyFile(t *testing.T) {
	home := configEnv(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, file, "")
	code, out, errOut := runCfg(t, "cursor", "--write", "--no-approvals")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if b := backups(t, file); len(b) != 0 || strings.Contains(out, "backup:") {
		t.Errorf("an empty file was backed up: %q\n%s", b, out)
	}
	if !strings.Contains(readFile(t, file), testBin) {
		t.Error("not written")
	}
}

// Issue 25.6h: a conflict says what is in the way and ends with the commands out of it, each
// of which works as printed.
func TestConfigConflictPrintsCommandsThatWork(t *testing.T) {
	for _, tc := range []struct {
		name, harness, file, content string
		ways                         int
		flags                        []string
	}{
		{"different entry", "cursor", ".cursor/mcp.json", `{"mcpServers": {"resmon": {"command": "/old/resmongw", "args": ["stdio"]}}}`, 2, nil},
		// Under --writes=harness Cursor's own prompt is the only confirmation, so a wildcard
		// that pre-approves the writes contradicts it (under ask it would not).
		{"contradicting settings", "cursor", ".cursor/permissions.json", `{"mcpAllowlist": ["resmon:*"]}`, 2, []string{"--writes=harness"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cmds []string
			for way := 0; way < tc.ways; way++ {
				home := configEnv(t)
				writeFile(t, filepath.Join(home, tc.file), tc.content)
				code, _, errOut := runCfg(t, append([]string{tc.harness, "--write"}, tc.flags...)...)
				if code != 1 || !strings.Contains(errOut, "Nothing was changed.") {
					t.Fatalf("exit %d\n%s", code, errOut)
				}
				cmds = nil
				for _, line := range strings.Split(errOut, "\n") {
					if strings.HasPrefix(line, "    resmongw config ") {
						cmds = append(cmds, strings.TrimSpace(line))
					}
				}
				if len(cmds) != tc.ways {
					t.Fatalf("%d commands, want %d:\n%s", len(cmds), tc.ways, errOut)
				}
				args := strings.Fields(cmds[way])[2:]
				if code, out, errOut := runCfg(t, args...); code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", cmds[way], code, out, errOut)
				}
			}
			if !strings.Contains(cmds[0], "--force") {
				t.Errorf("the first way out is not --force: %q", cmds)
			}
		})
	}
}
