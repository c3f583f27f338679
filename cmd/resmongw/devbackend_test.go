package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 26.8: `dev backend --state-dir D` with a FIFO at D/resmon.port hung for ever (its
// check of a running backend read the port file plainly). It refuses it now, at once, as
// discovery does, and says what to remove.
func TestDevBackendRefusesAFIFOPortFile(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t, 60*time.Second)
	dir := filepath.Join(t.TempDir(), "state")
	if err := syscall.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "resmon.port")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "dev", "backend", "--state-dir", dir)
	cmd.Env = []string{"PATH=/usr/bin:/bin", testkit.NoRaceExitSleep}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("dev backend hung on a FIFO port file:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(string(out), fifo) || !strings.Contains(string(out), "not a regular file") {
		t.Fatalf("dev backend with a FIFO port file: %v, want exit 1 naming the FIFO:\n%s", err, out)
	}
}
