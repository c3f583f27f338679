package testkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/ours"
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

// MainWithBinary is a TestMain: it builds resmongw once (into sharedBinDir, where the next
// run finds it up to date), sets *bin to its path, runs the tests and, when they passed,
// afterPass (nil for none; its error fails the run), then exits. The directory is
// world-readable so a helper running as another user can execute the binary. The tests run
// with a private /run/user (withPrivateRunUser).
func MainWithBinary(m *testing.M, bin *string, race bool, afterPass func() error) {
	withPrivateRunUser() // the tests' processes never reach the real per-user default socket
	Exit(runWithBinary(m, bin, race, afterPass))
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

// sharedBinDir is where the binary is built and kept between runs: one directory per checkout
// and flavour (race or not) under the temporary directory. go build finds the binary there up
// to date and skips the link, which costs about 2 CPU-seconds in each of the four packages
// that run the binary, on every run; two packages building at once each rename their
// (identical) output over the other's atomically, so a running test never sees a partial
// file. It is world-readable, since a helper running as another user executes the binary,
// and it is refused unless this user owns it and nobody else can write to it.
func sharedBinDir(race bool) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	flavour := "plain"
	if race {
		flavour = "race"
	}
	base := filepath.Join(os.TempDir(), "resmongw-testbin-"+strconv.Itoa(os.Geteuid()))
	dir := filepath.Join(base, hex.EncodeToString(sum[:6])+"-"+flavour)
	for _, d := range []string{base, dir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() || ours.File(fi, false) != ours.Trusted { // the one rule, package ours
			return "", fmt.Errorf("%s is not a private directory of this user", d)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// moduleRoot is the directory of the go.mod above the working directory (a test runs in its
// package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

func runWithBinary(m *testing.M, bin *string, race bool, afterPass func() error) int {
	raiseParallel()
	noRaceExitSleepInherited()
	dir, err := sharedBinDir(race)
	if err != nil {
		// Not ours to reuse: a private directory for this run, as before.
		if dir, err = os.MkdirTemp("", "rgwbin"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		_ = os.Chmod(dir, 0o755)
	}
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
