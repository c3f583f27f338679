package resmonsim

import (
	"os"
	"path/filepath"
)

// resmonStateDirs (every POSIX system but macOS, whose layout statedir_darwin.go has) are the directories the real resmon uses as its POSIX state directory
// ($XDG_STATE_HOME/resmon, else ~/.local/state/resmon), which the simulator refuses.
func resmonStateDirs() []string {
	var dirs []string
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		dirs = append(dirs, filepath.Join(x, "resmon"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "state", "resmon"))
	}
	return dirs
}
