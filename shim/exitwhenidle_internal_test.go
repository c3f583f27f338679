//go:build linux || darwin

package shim

import (
	"testing"
	"time"
)

// The autostarted daemon's idle period: the default, a chosen one, 0 for none, and the
// default again for a value that is not a duration.
func TestExitWhenIdleFromTheEnvironment(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 10 * time.Minute, "30m": 30 * time.Minute, "90s": 90 * time.Second, "0": 0, "soon": 10 * time.Minute, "-1m": 10 * time.Minute} {
		if got := exitWhenIdle(func(string) string { return v }); got != want {
			t.Errorf("%s=%q: %v, want %v", ExitWhenIdleEnv, v, got, want)
		}
	}
}
