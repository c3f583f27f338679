package resmonsim

import (
	"os"
	"path/filepath"
)

// defaultStateDir is resmon's macOS state directory (daemon.state_dir).
func defaultStateDir() (string, error) {
	if d := os.Getenv("RESMON_STATE_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "Library", "Application Support", "resmon"), nil
}
