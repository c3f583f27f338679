package backend

import (
	"context"
	"strings"
)

// Unreachable is the backend of a session that no resmongw daemon serves (the shim's
// fallback, daemon.ServeUnreachable): every request fails before anything is sent, saying why
// the daemon cannot be reached (why's latest reason) and what to do. The tools still run as
// on a daemon (their arguments checked first), so an answer differs from a daemon's only
// where the daemon would have had to reach resmon.
func Unreachable(why func() error) API { return unreachable{why} }

type unreachable struct{ why func() error }

func (u unreachable) Call(context.Context, *Request) (any, error) {
	return nil, DaemonUnreachable(u.why())
}

// ReasonDaemonUnavailable is detail.reason of every answer given because no daemon serves the
// session (the shim's own answers use it too).
const ReasonDaemonUnavailable = "DaemonUnavailable"

// DaemonUnreachable is a tool's answer when the daemon cannot be reached: internal_error (the
// gateway itself failed, as for the shim's other answers about the daemon), not
// backend_unavailable, which tells the model that the resmon app is closed and to suggest
// starting it — the wrong fix here. The message carries why and the fix, and that the next
// call tries again, so the person need not restart the MCP server.
func DaemonUnreachable(why error) *ToolError {
	msg := "The resmongw daemon cannot be reached, so nothing was sent to resmon"
	if why != nil {
		msg += ": " + strings.TrimSuffix(why.Error(), ".")
	}
	msg += ". Every tool call tries the daemon again, so call again once that is fixed; this MCP server does not need a restart."
	return NewError(CodeInternalError, msg, map[string]any{"reason": ReasonDaemonUnavailable})
}
