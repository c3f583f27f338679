package daemon

import (
	"os"
	"runtime"

	"github.com/resmongw/resmongw/launchd"
	"github.com/resmongw/resmongw/systemd"
)

// serviceFile is where `resmongw install` writes the per-user service under home (the very
// path the installer uses), or "" where there is no per-user service.
func serviceFile(home string) string {
	switch runtime.GOOS {
	case "linux":
		return systemd.UserUnitPath(home)
	case "darwin":
		return launchd.AgentPath(home)
	}
	return ""
}

// serviceInstalled reports whether that file exists, so status can suggest starting the
// service rather than installing it.
func serviceInstalled(getenv func(string) string) bool {
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return false
		}
	}
	path := serviceFile(home)
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
