package resmonsim

import (
	"os"
	"path/filepath"
)

// resmonStateDirs is the real resmon's macOS state directory, which the simulator refuses.
func resmonStateDirs() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(home, "Library", "Application Support", "resmon")}
}
