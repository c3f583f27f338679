package testkit

import (
	"context"
	"os"
	"os/exec"
)

// The helper-process pattern: a test runs its own test binary again as a child that, instead
// of running tests, does one thing (runs a command's Main, allocates, ignores signals) as a
// real separate process.
const (
	helperEnv    = "RESMONGW_TESTKIT_HELPER"
	helperArgEnv = "RESMONGW_TESTKIT_HELPER_ARG"
)

// HelperCommand is this test binary run again as the helper named name, given arg, with env
// added to this process's environment. The helper runs when TestMain calls RunHelper.
func HelperCommand(ctx context.Context, name, arg string, env ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name, helperArgEnv+"="+arg, NoRaceExitSleep), env...)
	return cmd
}

// RunHelper is called first in TestMain: when this process was started by HelperCommand for
// name, it runs helper with the argument and exits with its code; otherwise it returns.
func RunHelper(name string, helper func(arg string) int) {
	if name != "" && os.Getenv(helperEnv) == name {
		os.Exit(helper(os.Getenv(helperArgEnv)))
	}
}
