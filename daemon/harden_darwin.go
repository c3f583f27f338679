package daemon

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// harden turns core dumps off (RLIMIT_CORE 0) so the tokens the daemon holds never land in
// a core file. macOS has no PR_SET_DUMPABLE; PT_DENY_ATTACH is not used (it also blocks the
// user's own debugging and crash reporting, and root can get past it).
func harden() {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		fmt.Fprintf(os.Stderr, "resmongw serve: cannot turn off core dumps: %v\n", err)
	}
}
