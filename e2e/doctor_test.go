package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/doctor"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// runDoctor runs `resmongw doctor --json` in the world's environment (plus env) from dir.
func (w *world) runDoctor(t *testing.T, dir string, env ...string) (int, doctor.Report) {
	t.Helper()
	cmd := exec.Command(bin, "doctor", "--json")
	cmd.Env, cmd.Dir = w.Env(env...), dir
	out := w.output()
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	return code, rep
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A working setup: every check passes or does not apply (no service: autostart works), in
// the documented order, and doctor exits 0.
func TestDoctorPassesAWorkingSetup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	writeFile(t, filepath.Join(w.Home, ".cursor", "mcp.json"), `{"mcpServers": {"resmon": {"command": "`+bin+`", "args": ["stdio", "--writes=harness"]}}}`)
	code, rep := w.runDoctor(t, w.Home, simEnv(sim)...)
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
		if c.Result == doctor.Fail {
			t.Errorf("failed: %+v", c)
		}
	}
	// The world's daemon is a private one (RESMONGW_SOCKET): doctor says the entry reaches the
	// default daemon instead, as information.
	want := "version,socket directory,daemon,service,state directory,port file,token file,resmon,harness socket,harness cursor entry resmon,log"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("checks %s\nwant    %s", got, want)
	}
	if code != 0 || !rep.OK {
		t.Errorf("exit %d, ok %v; want 0, true", code, rep.OK)
	}
	for _, c := range rep.Checks {
		if c.Name == "harness socket" && (c.Result != doctor.Info || !strings.Contains(c.Detail, w.Socket) || !strings.Contains(c.Fix, "unset RESMONGW_SOCKET")) {
			t.Errorf("the private daemon is not said to be other than the harnesses' default: %+v", c)
		}
		if c.Name == "service" && c.Result != doctor.Info {
			t.Errorf("no service installed must be information: %+v", c)
		}
		if c.Name == "daemon" && (c.Result != doctor.Pass || !strings.Contains(c.Detail, "from "+bin)) {
			t.Errorf("daemon check does not name its binary: %+v", c)
		}
	}
}

// What is broken fails with a fix that is safe to paste: harness entries naming a missing
// binary or an unknown write policy, a socket in a directory others can write (the fix never
// chmods it), no resmon; doctor exits 1.
func TestDoctorFailsWithSafeFixes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	project := t.TempDir()
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"resmon": {"type": "stdio", "command": "/nonexistent/resmongw", "args": ["stdio"]}}}`)
	writeFile(t, filepath.Join(w.Home, ".codex", "config.toml"), "[mcp_servers.resmon]\ncommand = \""+bin+"\"\nargs = [\"stdio\", \"--writes=sometimes\"]\n")
	code, rep := w.runDoctor(t, project, "RESMON_STATE_DIR="+filepath.Join(w.Home, "no-resmon"))
	got := map[string]doctor.Check{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	for name, fix := range map[string]string{
		"harness claude-code (project) entry resmon": "resmongw config claude-code --write --force",
		"harness codex entry resmon":                 "resmongw config codex --write --force",
		"state directory":                            "start the resmon app",
		"resmon":                                     "start the resmon app",
	} {
		if c := got[name]; c.Result != doctor.Fail || !strings.Contains(c.Fix, fix) {
			t.Errorf("%s: %+v; want a failure whose fix says %q", name, c, fix)
		}
	}
	if c := got["daemon"]; c.Result != doctor.Info {
		t.Errorf("no daemon must be information (autostart starts it): %+v", c)
	}
	if code != 1 || rep.OK {
		t.Errorf("exit %d, ok %v; want 1, false", code, rep.OK)
	}

	// A socket in a directory others can write, as RESMONGW_SOCKET=/tmp/... would put it.
	shared := testkit.ShortTempDir(t)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	_, rep = w.runDoctor(t, project, "RESMONGW_SOCKET="+filepath.Join(shared, "mcp.sock"))
	for _, c := range rep.Checks {
		if strings.Contains(c.Fix, "chmod") && strings.Contains(c.Fix, shared) {
			t.Errorf("a fix chmods a shared directory: %+v", c)
		}
		switch c.Name {
		case "socket directory":
			if c.Result != doctor.Fail || !strings.Contains(c.Fix, "unset RESMONGW_SOCKET") {
				t.Errorf("socket directory: %+v; want a failure whose fix is a private directory", c)
			}
		case "daemon":
			if c.Result != doctor.Fail || !strings.Contains(c.Fix, "socket directory") {
				t.Errorf("daemon behind a refused socket: %+v", c)
			}
		}
	}
}
