// Package packaging installs resmongw as a per-user service and writes harness configurations.
package packaging

import (
	"fmt"
	"os"
)

// ServiceMain runs install|uninstall|start|stop|restart. (Placeholder.)
func ServiceMain(verb string, args []string) int {
	fmt.Fprintln(os.Stderr, "resmongw "+verb+": not built yet")
	return 2
}

// ConfigMain runs `resmongw config`. (Placeholder.)
func ConfigMain(args []string) int {
	fmt.Fprintln(os.Stderr, "resmongw config: not built yet")
	return 2
}
