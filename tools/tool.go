package tools

import (
	"context"

	"github.com/resmongw/resmongw/backend"
)

// Handler runs one tool. args is the call's arguments object ({} when absent). It returns
// the success payload (any JSON-encodable value) or an error: a *ToolError is returned to the
// caller as is; any other error becomes internal_error.
type Handler func(ctx context.Context, api backend.API, args map[string]any) (any, error)

// Tool is one row of the tool table, the single source for tools/list, READ_TOOLS and WRITE_TOOLS.
type Tool struct {
	Name        string
	Description string
	// Summary is the one line `resmongw tools` prints (no caveats: those live in Description).
	// While it is empty, the first sentence of Description stands in.
	Summary     string
	InputSchema map[string]any // {"type":"object", ...}
	// RequiresConfirmation is resmon's own field, emitted on every tool in tools/list: true
	// for the 7 writes, false for the 18 reads.
	RequiresConfirmation bool
	// Destructive and Idempotent feed the MCP annotations of write tools (reads are readOnlyHint).
	Destructive bool
	Idempotent  bool
	OpenWorld   bool // reaches sources outside the machine (run_sweep, run_routine)
	// Paging, on a list tool, says how its answer is cut to the client's budget and how the
	// rest is fetched (budget.go); nil for a tool answering one record.
	Paging *Paging
	// Whole marks an answer that cannot be cut (an export file): over the client's budget
	// it is refused with how to ask for less.
	Whole   bool
	Handler Handler
}

// Run is the one way a tool is called: the arguments are checked against the row's own input
// schema (type, enum, bounds; see checkArguments) and only then given to the handler, so no
// request reaches the backend with an argument of the wrong type. The MCP server's handler
// calls it.
func (t *Tool) Run(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	if terr := CheckArguments(t.Name, t.InputSchema, args); terr != nil {
		return nil, terr
	}
	return t.Handler(ctx, api, args)
}

// Paging, on a list tool's row, says how its answer is cut to a budget and how the caller
// fetches what was left out.
type Paging struct {
	Items string // the answer's list: "papers", "executions", …
	By    string // PageCursor, PageOffset or PageNone
}

// How a list tool pages.
const (
	// PageCursor: the backend pages with an opaque next_cursor (and has_more); a shorter
	// page is asked of it again, so its cursor continues right after the last item kept.
	PageCursor = "cursor"
	// PageOffset: the caller passes offset; the page is cut here and offset+count continues.
	PageOffset = "offset"
	// PageNone: a ranked list without paging (find_similar): the nearest are kept and the
	// note says the rest cannot be fetched.
	PageNone = "none"
)
