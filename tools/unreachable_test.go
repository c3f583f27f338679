package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
)

// Without a daemon every tool, called with arguments it accepts, answers that the daemon
// cannot be reached, with the latest reason: no tool turns the failure into a result (an
// empty list would read as "nothing found"), and none reports resmon as closed.
func TestEveryToolSaysTheDaemonCannotBeReached(t *testing.T) {
	why := errors.New("the daemon is not running (no socket at /x/mcp.sock); start it with 'resmongw serve'")
	api := backend.Unreachable(func() error { return why })
	for _, tool := range Tools {
		out, te := callTool(t, api, tool.Name, example(tool.Name))
		if te == nil {
			t.Errorf("%s: answered %v without a daemon", tool.Name, out)
			continue
		}
		if te.Code != backend.CodeInternalError || te.Detail["reason"] != backend.ReasonDaemonUnavailable ||
			!strings.Contains(te.Message, "cannot be reached") || !strings.Contains(te.Message, "start it with 'resmongw serve'") {
			t.Errorf("%s: %s %q %v", tool.Name, te.Code, te.Message, te.Detail)
		}
	}
	// The reason is read at each call: a later try's reason replaces the first.
	why = errors.New("refusing the socket /x/mcp.sock: its directory /x is writable by others")
	if _, te := callTool(t, api, "health", nil); te == nil || !strings.Contains(te.Message, "writable by others") {
		t.Errorf("health after the reason changed: %v", te)
	}
}
