package shim

import (
	"path/filepath"

	"github.com/resmongw/resmongw/launchd"
)

// startService starts the LaunchAgent when `resmongw install` wrote its plist
// (~/Library/LaunchAgents/com.resmon.resmongw.plist), and reports whether launchctl says it
// started.
func startService(getenv func(string) string) bool {
	home, err := homeDir(getenv)
	if err != nil {
		return false
	}
	plist := filepath.Join(home, "Library", "LaunchAgents", launchd.Label+".plist")
	return fileExists(plist) && runBounded("launchctl", "start", launchd.Label)
}
