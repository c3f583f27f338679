package toolfacts

// Row is one tool of the table: everything about it but the code that runs it.
type Row struct {
	Name        string
	Description string
	// Summary is the one line `resmongw tools` prints (no caveats: those live in Description).
	// While it is empty, the first sentence of Description stands in.
	Summary     string
	InputSchema map[string]any // {"type":"object", ...}
	// RequiresConfirmation is resmon's own field, emitted on every tool in tools/list: true
	// for a write, false for a read.
	RequiresConfirmation bool
	// Destructive and Idempotent feed the MCP annotations of write tools (reads are readOnlyHint).
	Destructive bool
	Idempotent  bool
	OpenWorld   bool // reaches sources outside the machine (run_sweep, run_routine)
	// Paging, on a list tool, says how its answer is cut to the client's budget and how the
	// rest is fetched (mcpserver/budget.go); nil for a tool answering one record.
	Paging *Paging
	// Whole marks an answer that cannot be cut (an export file): over the client's budget
	// it is refused with how to ask for less.
	Whole bool
	// Example is arguments the tool accepts, for tests and measurements: one call of every
	// tool with them is made by the suite against the simulator and a recording double
	// (ids are 1, the first of each kind; a test needing real ids swaps them in).
	Example map[string]any
	// Confirm, on a write, says what a call will do with its arguments: the question the
	// gateway puts to the person before it sends anything (mcpserver/confirm.go).
	Confirm func(args map[string]any) string
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

// Paging bounds shared by every list tool (contract: small pages by default).
const (
	DefaultLimit = 25
	MaxLimit     = 100
)

// SettingsGroups are the groups update_settings may change, in the contract's order.
var SettingsGroups = []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"}

// ExecutionStatuses is resmon's closed vocabulary of execution states: a misspelt filter is
// refused rather than answered with nothing.
var ExecutionStatuses = []string{"running", "completed", "failed", "cancelled", "interrupted"}

// AnalyticsViews are get_analytics' views, sorted (the handler maps each to its route).
var AnalyticsViews = []string{"discovery-lag", "keywords", "overview", "routine-health", "sources", "volume"}
