package daemon

import (
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
)

// The bound a daemon states is its whole shutdown: the drain (which grows with the request
// timeout) and the closing after it.
func TestShutdownBoundFollowsTheRequestTimeout(t *testing.T) {
	def := shutdownBound(nil)
	if def <= drainBound(nil) || def < time.Minute {
		t.Errorf("default shutdown bound %v: want more than the drain bound %v and than the CLI's minute", def, drainBound(nil))
	}
	slow := shutdownBound(&backend.UpstreamOptions{Client: &backend.ClientOptions{RequestTimeout: 5 * time.Minute}})
	if slow-def != 2*(5*time.Minute-backend.DefaultRequestTimeout) {
		t.Errorf("shutdown bound with a 5m request timeout %v, default %v: want twice the timeout's difference more", slow, def)
	}
}
