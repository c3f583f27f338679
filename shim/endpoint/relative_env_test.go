package endpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// Relative RESMON_* paths mean relative to the harness's working directory; the daemon runs
// elsewhere (cwd "/"), so they are made absolute before they leave this process.
func TestCaptureEnvAbsolutisesRelativeResmonPaths(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"RESMON_STATE_DIR": "state", "RESMON_PORT_FILE": "./run/resmon.port", "RESMON_DB_PATH": "../db/resmon.db",
		"RESMON_PORT": "9001", "HOME": "/h", "XDG_STATE_HOME": "rel-state", // not paths of ours / left as XDG says
	}
	got := CaptureEnv(envOf(env))
	want := map[string]string{
		"RESMON_STATE_DIR": filepath.Join(cwd, "state"),
		"RESMON_PORT_FILE": filepath.Join(cwd, "run", "resmon.port"),
		"RESMON_DB_PATH":   filepath.Join(filepath.Dir(cwd), "db", "resmon.db"),
		"RESMON_PORT":      "9001", "HOME": "/h", "XDG_STATE_HOME": "rel-state",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	abs := map[string]string{"RESMON_STATE_DIR": "/already/abs"}
	if g := CaptureEnv(envOf(abs))["RESMON_STATE_DIR"]; g != "/already/abs" {
		t.Errorf("absolute path changed to %q", g)
	}
}
