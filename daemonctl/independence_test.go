package daemonctl

import (
	"os/exec"
	"strings"
	"testing"
)

// The client beside the CLI, and doctor built on it, need none of the daemon: the status
// document they share is statusdoc's.
func TestTheClientImportsNothingOfTheDaemon(t *testing.T) {
	const daemon = "github.com/resmongw/resmongw/daemon"
	for _, pkg := range []string{".", "../doctor"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == daemon {
				t.Errorf("%s depends on %s", pkg, daemon)
			}
		}
	}
}
