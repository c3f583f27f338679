package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeSystemctl records its arguments, one call a line; "start" starts the daemon the way the
// unit would (`resmongw serve` on the default socket, detached), every other verb succeeds
// doing nothing.
const fakeSystemctl = `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_SYSTEMCTL_LOG"
case "$*" in
*start*) "$RESMONGW_TEST_BIN" serve </dev/null >/dev/null 2>&1 & ;;
esac
exit 0
`

// FakeService is a user with the per-user systemd service installed, without a service
// manager: the unit file under home, a fake systemctl first on PATH that runs bin's `serve`
// on start, and a private /run/user (RunUser) holding a logind-style runtime directory, so the
// default socket (which follows the uid) is the test's own. Every command of that user runs
// through RunUser.Wrap; the test skips where there is no private /run/user (NewRunUser).
type FakeService struct {
	Socket  string   // the default socket the service's daemon serves, as the test sees it
	Env     []string // PATH, XDG_RUNTIME_DIR, NoRaceExitSleep and the fake's settings; add HOME
	CallLog string   // what systemctl was asked, one call a line
	RunUser *RunUser
}

// NewFakeService installs the fakes for bin under home, and the private /run/user under root:
// the caller makes root (ShortTempDir) so that its cleanup order fits the daemons it starts.
func NewFakeService(t testing.TB, root, home, bin string) *FakeService {
	t.Helper()
	ru := NewRunUser(t, root)
	bindir := filepath.Join(home, "bin")
	unitDir := filepath.Join(home, ".config", "systemd", "user")
	for _, d := range []string{bindir, unitDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bindir, "systemctl"), []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unitDir, "resmongw.service"), []byte("[Service]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &FakeService{Socket: ru.Socket(), CallLog: filepath.Join(home, "systemctl.log"), RunUser: ru}
	// XDG_RUNTIME_DIR as the user's session has it: the runtime directory at its real path.
	s.Env = []string{"PATH=" + bindir + ":" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=/run/user/" + strconv.Itoa(os.Getuid()), "FAKE_SYSTEMCTL_LOG=" + s.CallLog, "RESMONGW_TEST_BIN=" + bin, NoRaceExitSleep}
	return s
}

// Calls is what systemctl was asked so far.
func (s *FakeService) Calls() string {
	b, _ := os.ReadFile(s.CallLog)
	return string(b)
}
