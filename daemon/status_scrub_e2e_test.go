package daemon_test

import (
	"strings"
	"testing"
)

// Issue 26.1: a backend that echoes its token where status shows what it said (health's
// version, accepted by the version guard when it starts 2.3.0, or named in the "too old"
// message when it does not) never makes `resmongw status` print it, in any form.
func TestStatusNeverShowsAnEchoedToken(t *testing.T) {
	t.Parallel()
	w, verified, ctx := servedWorld(t)
	tooOld := startSim(t)
	verified.SetVersion("2.3.0." + verified.Token()) // before the daemon first asks
	tooOld.SetVersion("1.0." + tooOld.Token())
	for _, sim := range []struct {
		name    string
		ok      bool
		backend interface {
			Token() string
			StateDir() string
		}
	}{{"verified", true, verified}, {"too old", false, tooOld}} {
		tok := sim.backend.Token()
		env := []string{"RESMON_STATE_DIR=" + sim.backend.StateDir()}
		for _, form := range [][]string{nil, {"--verbose"}, {"--json"}} {
			out, code := w.runStatus(ctx, env, form...)
			if strings.Contains(out, tok) {
				t.Fatalf("status %v of the %s backend (exit %d) shows the token:\n%s", form, sim.name, code, out)
			}
			if !strings.Contains(out, "[redacted]") || (code == 0) != sim.ok {
				t.Errorf("status %v of the %s backend: exit %d, and no [redacted] where its version was:\n%s", form, sim.name, code, out)
			}
		}
	}
}
