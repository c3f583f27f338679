package shim

import (
	"path/filepath"

	"github.com/resmongw/resmongw/systemd"
)

// startService starts the systemd user service when `resmongw install` wrote its unit
// ($XDG_CONFIG_HOME/systemd/user/resmongw.service, by default under ~/.config), and reports
// whether systemctl says it started.
func startService(getenv func(string) string) bool {
	config := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) { // unset or relative: XDG says use the default
		home, err := homeDir(getenv)
		if err != nil {
			return false
		}
		config = filepath.Join(home, ".config")
	}
	unit := filepath.Join(config, "systemd", "user", systemd.UnitName)
	return fileExists(unit) && runBounded("systemctl", "--user", "start", systemd.UnitName)
}
