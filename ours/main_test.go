package ours_test

import (
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// TestMain exits without the race detector's second of sleep at exit (testkit.Exit). The
// package's tests are external (ours_test) since testkit imports ours for its binary cache.
func TestMain(m *testing.M) { testkit.Main(m) }
