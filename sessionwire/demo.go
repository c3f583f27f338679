package sessionwire

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// DemoEnv marks a harness entry that `resmongw demo` printed: it names the demo's private
// directory. Such an entry never starts a daemon (the demo's daemon lives in the demo's own
// process, and a daemon started for it would recreate the demo's deleted directory), and when
// the demo is gone the shim and status say so and how to remove the entry.
const DemoEnv = "RESMONGW_DEMO"

// DemoName is the server name the demo's harness lines use, so they never replace a real
// "resmon" entry.
const DemoName = "resmon-demo"

// DemoUnreachable is what a demo entry says when its daemon cannot be reached: the demo has
// ended (its directory is gone) or is not running, and how to remove the entry.
func DemoUnreachable(dir string, err error) error {
	remove := fmt.Sprintf("remove this entry: claude mcp remove %s (Claude Code), codex mcp remove %s (Codex), or delete %q from mcpServers (Cursor, Claude Desktop)",
		DemoName, DemoName, DemoName)
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("the resmongw demo this MCP server entry was made for has ended (%s is gone); %s", dir, remove)
	}
	return fmt.Errorf("the resmongw demo this MCP server entry was made for is not running (%v); run 'resmongw demo' again for a new one, and %s", err, remove)
}
