package resmonsim_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The simulator is the other side of every gateway test, so it must not share code with the
// gateway: a bug in a shared helper would then hide on both sides. Only the standard library,
// its own module-external dependencies and internal/testkit (stdlib only, tests only) are
// allowed; any other package of this module among its dependencies fails the test.
func TestSimulatorImportsNothingOfTheGateway(t *testing.T) {
	const module = "github.com/resmongw/resmongw/"
	for _, goos := range []string{"linux", "darwin"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, module) && p != module+"resmonsim" {
				t.Errorf("GOOS=%s: the simulator depends on %s, a package of the gateway", goos, p)
			}
		}
	}
}
