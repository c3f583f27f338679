package daemon

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// harden keeps the tokens the daemon holds out of core dumps and out of reach of a
// debugger run as the same user, as ssh-agent does: no core file (RLIMIT_CORE 0) and not
// dumpable (PR_SET_DUMPABLE 0, which also makes /proc/<pid>/mem, environ and friends
// root's and refuses ptrace from other processes of the user). Called before any token is
// read; a failure is reported and the daemon runs on.
func harden() {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		fmt.Fprintf(os.Stderr, "resmongw serve: cannot turn off core dumps: %v\n", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "resmongw serve: cannot mark the process not dumpable: %v\n", err)
	}
}
