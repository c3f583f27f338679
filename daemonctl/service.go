package daemonctl

import (
	"os"

	"github.com/resmongw/resmongw/paths"
)

// ServiceInstalled reports whether `resmongw install` wrote the per-user service file, so
// status can suggest starting the service rather than installing it, and start/stop/restart
// go through the service manager.
func ServiceInstalled(getenv func(string) string) bool {
	home, err := paths.Home(getenv)
	if err != nil {
		return false
	}
	path := paths.ServiceFile(home)
	if path == "" {
		return false
	}
	_, err = os.Stat(path)
	return err == nil
}
