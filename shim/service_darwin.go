package shim

import (
	"github.com/resmongw/resmongw/launchd"
	"github.com/resmongw/resmongw/paths"
)

// startService starts the LaunchAgent when `resmongw install` wrote its plist (at
// launchd.AgentPath, the path the installer writes), and reports whether launchctl says it
// started.
func startService(getenv func(string) string) bool {
	home, err := paths.Home(getenv)
	if err != nil {
		return false
	}
	return fileExists(paths.ServiceFile(home)) && runBounded("launchctl", "start", launchd.Label)
}
