package testkit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buildLimit bounds one `go build` of the binary; a cold -race build on a busy machine is slow.
const buildLimit = 10 * time.Minute

// Build compiles cmd/resmongw into dir (with -race when race is set) and returns the binary's
// path. Tests run the real binary a harness launches, not an in-process stand-in.
func Build(ctx context.Context, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "resmongw")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "github.com/resmongw/resmongw/cmd/resmongw")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// MainWithBinary is a TestMain: it builds resmongw once into a directory of its own, sets *bin
// to its path, runs the tests and, when they passed, afterPass (nil for none; its error fails
// the run), then removes the binary and exits. The directory is world-readable so a helper
// running as another user can execute the binary.
func MainWithBinary(m *testing.M, bin *string, race bool, afterPass func() error) {
	os.Exit(runWithBinary(m, bin, race, afterPass))
}

// noRaceExitSleepInherited puts NoRaceExitSleep into this process's environment (GORACE is
// read once at start, so this process is unaffected), for the children a test starts with the
// inherited environment rather than World.Env: each -race child otherwise sleeps a second at
// exit, and a test that waits for three exits waits three seconds.
func noRaceExitSleepInherited() {
	name, value, _ := strings.Cut(NoRaceExitSleep, "=")
	cur := os.Getenv(name)
	if strings.Contains(cur, "atexit_sleep_ms") {
		return // the person running the tests chose
	}
	_ = os.Setenv(name, strings.TrimSpace(cur+" "+value))
}

// waitingParallelism is how many parallel tests a package that runs the binary runs at once
// unless -test.parallel says otherwise. Its tests spend most of their time waiting on child
// processes (a daemon listens, a shim exits, a backend answers), so go test's default of
// GOMAXPROCS left the cores idle: on 2 cores the daemon package ran 60 s of parallel tests two
// at a time, 39 s of wall for 22 s of CPU.
func waitingParallelism() int { return 4 * runtime.GOMAXPROCS(0) }

// raiseParallel sets -test.parallel to waitingParallelism when the command line did not set it.
func raiseParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(waitingParallelism()))
	}
}

func runWithBinary(m *testing.M, bin *string, race bool, afterPass func() error) int {
	raiseParallel()
	noRaceExitSleepInherited()
	dir, err := os.MkdirTemp("", "rgwbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	_ = os.Chmod(dir, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), buildLimit)
	*bin, err = Build(ctx, dir, race)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building resmongw:", err)
		return 1
	}
	code := m.Run()
	if code == 0 && afterPass != nil {
		if err := afterPass(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}
