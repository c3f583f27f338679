//go:build !darwin

package resmonsim

import (
	"os"
	"path/filepath"
)

// defaultStateDir is resmon's POSIX state directory: $XDG_STATE_HOME/resmon, falling back
// to ~/.local/state/resmon (daemon.state_dir).
func defaultStateDir() (string, error) {
	if d := os.Getenv("RESMON_STATE_DIR"); d != "" {
		return d, nil
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "resmon"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "resmon"), nil
}
