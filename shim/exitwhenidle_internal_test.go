//go:build linux || darwin

package shim

import "testing"

// The autostarted daemon's idle period: the default, a chosen one, 0 for none, and the
// default again for a value that is not a duration.
func TestExitWhenIdleFromTheEnvironment(t *testing.T) {
	for v, want := range map[string]string{"": "10m0s", "30m": "30m0s", "90s": "1m30s", "0": "", "soon": "10m0s", "-1m": "10m0s"} {
		if got := exitWhenIdle(func(string) string { return v }); got != want {
			t.Errorf("%s=%q: %q, want %q", ExitWhenIdleEnv, v, got, want)
		}
	}
}
