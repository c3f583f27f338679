// Package tools runs the tool table: each row's handler, the argument checks its schema drives
// and the reply shapes it accepts from the backend.
package tools

import (
	"context"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/toolfacts"
)

// Handler runs one tool. args is the call's arguments object ({} when absent). It returns
// the success payload (any JSON-encodable value) or an error: a *ToolError is returned to the
// caller as is; any other error becomes internal_error.
type Handler func(ctx context.Context, api backend.API, args map[string]any) (any, error)

// Tool is one row of the table with the handler that runs it (tools/handlers.go).
type Tool struct {
	toolfacts.Row
	Handler Handler
}

// Tools is the table the gateway serves: every row of toolfacts.Rows, in its order, with its
// handler.
var Tools = func() []Tool {
	out := make([]Tool, 0, len(toolfacts.Rows))
	for _, r := range toolfacts.Rows {
		out = append(out, Tool{Row: r, Handler: handlers[r.Name]})
	}
	return out
}()

// ToolByName finds a tool of the table.
func ToolByName(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Run is the one way a tool is called: the arguments are checked against the row's own input
// schema (type, enum, bounds; see CheckArguments) and only then given to the handler, so no
// request reaches the backend with an argument of the wrong type. The MCP server's handler
// calls it.
func (t *Tool) Run(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	if terr := CheckArguments(t.Name, t.InputSchema, args); terr != nil {
		return nil, terr
	}
	return t.Handler(ctx, api, args)
}
