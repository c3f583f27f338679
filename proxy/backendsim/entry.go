// Package backendsim is a faithful simulator of the resmon backend's local HTTP API, for tests, benchmarks and demos.
package backendsim

import (
	"fmt"
	"os"
)

// Main runs `resmongw dev backend`. (Placeholder.)
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "resmongw dev backend: not built yet")
	return 2
}
