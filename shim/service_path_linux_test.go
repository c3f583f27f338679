package shim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/paths"
)

// The shim looks for the unit exactly where `resmongw install` writes it (kardianos:
// ~/.config/systemd/user), even when XDG_CONFIG_HOME points elsewhere: otherwise an installed
// service is never started and the shim spawns a second, unmanaged daemon.
func TestStartServiceFindsTheUnitTheInstallerWrote(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir() // a different config home, with no unit in it
	unit := filepath.Join(home, ".config", "systemd", "user", "resmongw.service")
	if paths.ServiceFile(home) != unit {
		t.Fatalf("UserUnitPath = %s, want the installer's %s", paths.ServiceFile(home), unit)
	}
	if err := os.MkdirAll(filepath.Dir(unit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("[Service]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bindir := t.TempDir()
	calls := filepath.Join(bindir, "calls")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + calls + "\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bindir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bindir+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}
	if !startService(func(k string) string { return env[k] }) {
		t.Fatal("startService did not start the installed unit")
	}
	b, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(b)); got != "--user start resmongw.service" {
		t.Errorf("systemctl calls = %q", got)
	}
}
