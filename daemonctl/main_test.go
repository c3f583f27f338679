package daemonctl

import (
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// TestMain exits without the race detector's second of sleep at exit (testkit.Exit).
func TestMain(m *testing.M) { testkit.Main(m) }
