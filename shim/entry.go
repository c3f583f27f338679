// Package shim is `resmongw stdio`: a tiny stdlib-only pipe between a harness's stdio and the daemon's socket.
package shim

import (
	"fmt"
	"os"
)

// Main runs the shim. (Placeholder until the shim lands.)
func Main(args []string) int { fmt.Fprintln(os.Stderr, "resmongw stdio: not built yet"); return 2 }
