package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// attackerUID is a third local user, beside the victim (nobody): a uid with no entry in the
// user database, which the kernel honours all the same.
const attackerUID = 65533

// asUID runs name as uid (and that gid), without supplementary groups, in dir.
func asUID(ctx context.Context, uid uint32, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	return cmd
}

// Issue 26.7, as it was found: a user (the victim, nobody here, not root) runs
// `resmongw config claude-code --write` in a project directory others can write, where
// another user planted `.claude` as a link to the victim's own ~/.claude. The victim's settings
// are untouched, nothing is written in the project, the exit is 1 and the message names the
// link. In a project directory of the victim's own, the same command writes both files.
func TestAttackConfigWriteThroughAPlantedLink(t *testing.T) {
	t.Parallel()
	testkit.NeedRoot(t)
	ctx := testkit.Context(t, time.Minute)
	base, err := os.MkdirTemp("", "rgcfg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	mkdir := func(p string, mode os.FileMode, uid int) {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(base, "home")
	mkdir(home, 0o700, testkit.OtherUID)
	mkdir(filepath.Join(home, ".claude"), 0o700, testkit.OtherUID)
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(settings, testkit.OtherUID, testkit.OtherUID); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(base, "shared-project")
	mkdir(shared, os.ModeSticky|0o777, 0)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, testkit.NoRaceExitSleep}

	link := filepath.Join(shared, ".claude")
	if out, err := asUID(ctx, attackerUID, shared, env, "ln", "-s", filepath.Join(home, ".claude"), link).CombinedOutput(); err != nil {
		t.Fatalf("the attacker's link: %v\n%s", err, out)
	}
	victim := asUID(ctx, testkit.OtherUID, shared, env, bin, "config", "claude-code", "--write")
	out, err := victim.CombinedOutput()
	if code := victim.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s", code, err, out)
	}
	if !strings.Contains(string(out), link+" is a symbolic link that belongs to another user") {
		t.Errorf("the refusal does not name the link:\n%s", out)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
		t.Errorf("the victim's settings were written through the link:\n%s", b)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, ".claude")); len(entries) != 1 {
		t.Errorf("files appeared in the victim's ~/.claude: %v", entries)
	}
	if _, err := os.Lstat(filepath.Join(shared, ".mcp.json")); !os.IsNotExist(err) {
		t.Error(".mcp.json was written in the shared project")
	}

	// The same command in a project of the victim's own writes both files.
	own := filepath.Join(base, "own-project")
	mkdir(own, 0o755, testkit.OtherUID)
	victim = asUID(ctx, testkit.OtherUID, own, env, bin, "config", "claude-code", "--write")
	if out, err := victim.CombinedOutput(); err != nil {
		t.Fatalf("in the victim's own project: %v\n%s", err, out)
	}
	for _, f := range []string{".mcp.json", filepath.Join(".claude", "settings.json")} {
		fi, err := os.Stat(filepath.Join(own, f))
		if err != nil || fi.Sys().(*syscall.Stat_t).Uid != testkit.OtherUID {
			t.Errorf("%s not written as the victim: %v", f, err)
		}
	}
}
