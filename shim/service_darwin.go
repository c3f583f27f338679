package shim

import (
	"github.com/resmongw/resmongw/launchd"
)

// startService starts the LaunchAgent when `resmongw install` wrote its plist (at
// launchd.AgentPath, the path the installer writes), and reports whether launchctl says it
// started.
func startService(getenv func(string) string) bool {
	home, err := homeDir(getenv)
	if err != nil {
		return false
	}
	return fileExists(launchd.AgentPath(home)) && runBounded("launchctl", "start", launchd.Label)
}
