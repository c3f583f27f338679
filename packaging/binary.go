package packaging

import (
	"fmt"
	"os"
	"path/filepath"
)

// executable is os.Executable; tests replace it to exercise unusual install paths.
var executable = os.Executable

// binaryPath is the absolute path of the running resmongw with symlinks resolved, so a
// service file or harness config keeps working when a symlink (a Homebrew or ~/bin link)
// moves, and never points into a temporary `go run` build directory by accident.
func binaryPath() (string, error) {
	p, err := executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the resmongw binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Abs(p)
}
