package toolfacts

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The packages of the tool surface import downwards only: the tool table (this package) is
// data anyone may read without pulling in MCP or HTTP; the backend client knows no MCP; the
// MCP server speaks HTTP only through the backend client; and the config writers and
// `resmongw tools` read the table without the server or an HTTP stack.
func TestPackagesImportOnlyDownwards(t *testing.T) {
	const module = "github.com/resmongw/resmongw/"
	const sdk = "github.com/modelcontextprotocol/go-sdk"
	// list is pkg's dependencies, every one down to the standard library (deps), or the
	// packages its own files import (imports).
	list := func(t *testing.T, goos, what, pkg string) []string {
		t.Helper()
		args := []string{"list", "-deps", "-f", "{{.ImportPath}}", module + pkg}
		if what == "imports" {
			args = []string{"list", "-f", `{{join .Imports " "}}`, module + pkg}
		}
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s (%s): %v", pkg, goos, err)
		}
		return strings.Fields(string(out))
	}
	rules := []struct {
		pkg, format string
		forbidden   []string // import paths, or prefixes ending in "/"
	}{
		{"toolfacts", "deps", []string{module, sdk + "/", "net/http"}},
		{"backend", "deps", []string{sdk + "/", module + "toolfacts", module + "tools", module + "mcpserver"}},
		{"tools", "deps", []string{sdk + "/", module + "mcpserver"}},
		{"mcpserver", "imports", []string{"net/http"}},
		{"packaging", "deps", []string{module + "mcpserver", module + "tools", module + "backend", "net/http", sdk + "/"}},
		{"tooltable", "deps", []string{module + "mcpserver", module + "tools", module + "backend", "net/http", sdk + "/"}},
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, r := range rules {
			for _, p := range list(t, goos, r.format, r.pkg) {
				if p == module+r.pkg {
					continue
				}
				for _, f := range r.forbidden {
					if p == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(p, f)) {
						t.Errorf("GOOS=%s: %s: %s has %s", goos, r.pkg, r.format, p)
					}
				}
			}
		}
	}
}
