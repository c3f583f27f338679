// Package daemon is the long-lived per-user gateway: the MCP socket, sessions bound to
// targets, hot swap across backend restarts, status, lifecycle and logging.
package daemon

import (
	"fmt"
	"os"
)

// Version is the gateway's version, reported by status and `resmongw version`.
var Version = "0.1.0-dev"

// ServeMain runs `resmongw serve`. (Placeholder until the daemon lands.)
func ServeMain(args []string) int { fmt.Fprintln(os.Stderr, "resmongw serve: not built yet"); return 2 }

// StatusMain runs `resmongw status`. (Placeholder until the daemon lands.)
func StatusMain(args []string) int {
	fmt.Fprintln(os.Stderr, "resmongw status: not built yet")
	return 2
}
