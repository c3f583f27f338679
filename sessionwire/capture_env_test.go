package sessionwire

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCaptureEnvForwardsOnlyTargetKeys(t *testing.T) {
	env := map[string]string{"RESMON_PORT": "9001", "HOME": "/h", "RESMON_API_TOKEN": "secret-secret-secret", "PATH": "/bin", "RESMON_DB_PATH": ""}
	got := CaptureEnv(envOf(env))
	if len(got) != 2 || got["RESMON_PORT"] != "9001" || got["HOME"] != "/h" {
		t.Fatalf("captured %v", got)
	}
}

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

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
