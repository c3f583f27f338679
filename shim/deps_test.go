package shim_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The shim is stdlib only (it starts with every harness session and must stay tiny): beyond
// the standard library it may import only these packages of ours, which are stdlib only too,
// and, on macOS, x/sys/unix for the peer's credentials (the stdlib has no LOCAL_PEERCRED).
func TestShimImportsOnlyStdlib(t *testing.T) {
	allowed := []string{
		"github.com/resmongw/resmongw/shim",
		"github.com/resmongw/resmongw/sessionwire",
		"github.com/resmongw/resmongw/paths",   // per-user locations (stdlib only)
		"github.com/resmongw/resmongw/ours",    // the one trust rule (stdlib only)
		"github.com/resmongw/resmongw/systemd", // the unit's name, for service-aware autostart
		"github.com/resmongw/resmongw/launchd", // the agent's label
		"github.com/resmongw/resmongw/version", // the build's version, for the preamble (no imports)
	}
	allowedOn := map[string][]string{"darwin": {"golang.org/x/sys/unix"}}
	for _, goos := range []string{"linux", "darwin"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if !slices.Contains(allowed, p) && !slices.Contains(allowedOn[goos], p) {
				t.Errorf("GOOS=%s: the shim depends on %s", goos, p)
			}
		}
	}
}
