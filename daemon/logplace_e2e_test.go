package daemon_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.6 / 25.6c: the autostarted daemon's log does not follow the harness's HOME or
// XDG_STATE_HOME. A harness with no HOME, and one whose HOME another user (nobody, for real)
// pre-created in a shared place, both get a daemon; its log is beside the socket, and nothing
// is written in the foreign HOME.
func TestAutostartWithoutHomeOrWithAForeignHome(t *testing.T) {
	t.Parallel()
	foreignBase := testkit.OtherUserDir(t)
	foreign := filepath.Join(foreignBase, "home")
	mk := exec.Command("mkdir", "-p", "-m", "0755", filepath.Join(foreign, ".local", "state"))
	testkit.AsOtherUser(mk)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("nobody pre-creating a HOME: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		home []string
	}{
		{"no HOME", nil},
		{"a HOME nobody pre-created", []string{"HOME=" + foreign, "XDG_STATE_HOME=" + filepath.Join(foreign, ".local", "state")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, sim, ctx := unservedWorld(t)
			env := append([]string{"PATH=" + os.Getenv("PATH"), "RESMONGW_SOCKET=" + w.Socket, testkit.NoRaceExitSleep,
				"RESMON_STATE_DIR=" + sim.StateDir()}, c.home...)
			cmd := exec.Command(bin, "stdio")
			cmd.Env = env
			var stderr testkit.SyncBuffer
			cmd.Stderr = &stderr
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
				Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit}, nil)
			if err != nil {
				t.Fatalf("autostart with %s: %v\nshim stderr: %s", c.name, err, stderr.String())
			}
			defer cs.Close()
			if got := healthRuntimeID(ctx, t, cs); got != sim.RuntimeID() {
				t.Fatalf("health runtime id %s, want %s", got, sim.RuntimeID())
			}
			testkit.WaitFor(t, testkit.WaitLimit, func() bool {
				b, _ := os.ReadFile(w.LogFile())
				return strings.Contains(string(b), "daemon started")
			}, "the daemon's log beside its socket")
			out, code := w.runStatus(ctx, []string{"RESMON_STATE_DIR=" + sim.StateDir()}, "--verbose")
			if code != 0 || !strings.Contains(out, w.LogFile()) || strings.Contains(out, "cannot be opened") {
				t.Fatalf("status -v (exit %d) does not name the log beside the socket:\n%s", code, out)
			}
		})
	}
	made := map[string]bool{foreign: true, filepath.Join(foreign, ".local"): true, filepath.Join(foreign, ".local", "state"): true}
	_ = filepath.WalkDir(foreign, func(p string, _ fs.DirEntry, err error) error {
		if err == nil && !made[p] {
			t.Errorf("written in the foreign HOME: %s", p)
		}
		return nil
	})
}

// Issue 25.6c: a log file the daemon cannot open (here in a directory of another user) does
// not stop it: it serves, logs to stderr, and status says where the log went and why.
func TestUnopenableLogNeverStopsTheDaemon(t *testing.T) {
	t.Parallel()
	foreign := testkit.OtherUserDir(t)
	w, sim, ctx := unservedWorld(t)
	d := w.startDaemon("--log-file", filepath.Join(foreign, "resmongw.log"))
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
		t.Fatalf("health runtime id %s, want %s", got, sim.RuntimeID())
	}
	if _, err := os.Stat(filepath.Join(foreign, "resmongw.log")); err == nil {
		t.Fatal("the daemon created its log in another user's directory")
	}
	plain, code := w.runStatus(ctx, simEnv(sim))
	verbose, _ := w.runStatus(ctx, simEnv(sim), "--verbose")
	js, _ := w.runStatus(ctx, simEnv(sim), "--json")
	for form, out := range map[string]string{"plain": plain, "--verbose": verbose} {
		if !strings.Contains(out, "stderr only") || !strings.Contains(out, "cannot be opened") || !strings.Contains(out, "another user") {
			t.Errorf("status %s (exit %d) does not say the log went to stderr and why:\n%s", form, code, out)
		}
	}
	if st := decodeStatus(t, js); st.Daemon.LogFile != "" || !strings.Contains(st.Daemon.LogProblem, "another user") {
		t.Errorf("status --json daemon: %+v", st.Daemon)
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return strings.Contains(d.stderr.String(), `"msg":"tool call"`) },
		"the daemon's entries on stderr")
}
