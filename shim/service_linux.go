package shim

import (
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/systemd"
)

// startService starts the systemd user service when `resmongw install` wrote its unit (at
// systemd.UserUnitPath, the very path the installer writes), and reports whether systemctl
// says it started.
func startService(getenv func(string) string) bool {
	unit, ok := installedUnit(getenv)
	return ok && fileExists(unit) && runBounded("systemctl", "--user", "start", systemd.UnitName)
}

// installedUnit is the path where an installed unit would be.
func installedUnit(getenv func(string) string) (string, bool) {
	home, err := paths.Home(getenv)
	if err != nil {
		return "", false
	}
	return paths.ServiceFile(home), true
}
