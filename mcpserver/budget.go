package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// Answers sized to the client. A harness shows a tool's answer whole only up to a size of its
// own and cuts or files away the rest, mid-JSON, so a model would read half a paper or a list
// it cannot tell is cut. Every answer of a list tool is therefore cut here first, at item
// boundaries, to the calling client's budget, with the tool's own paging fields set so the
// model can fetch what was left out, and a note saying how many that was. An export, which
// cannot be cut without looking complete, is refused instead with how to narrow it. One
// mechanism for every tool, driven by the facts on the table rows (Tool.Paging, Tool.Whole).

// Budgets, in bytes of the answer's text (UTF-8; every client below counts characters or
// bytes, and a character is never more than one UTF-8 byte's worth of either).
const (
	// ClaudeCodeBudget: Claude Code (2.1.332, read in its own code) keeps a successful MCP
	// answer in the conversation only up to 50,000 characters; a longer one is saved to a
	// file and the model sees a short preview and the path. Its token limit
	// (MAX_MCP_OUTPUT_TOKENS, default 25,000, estimated as characters/4, so 100,000
	// characters) is never the first to bite.
	ClaudeCodeBudget = 50_000
	// CodexBudget: Codex cuts every tool answer at about 10 KiB (10,000 bytes with some
	// models) before the model sees it, in the middle of the text.
	CodexBudget = 10_000
	// DefaultBudget is for every other client: about 6,000 tokens, under every limit we know
	// of but Codex's, and above a default page (25 papers, about 10 KB), so only a large page
	// is ever cut for them.
	DefaultBudget = 25_000
	// MinBudget is the smallest budget --max-output can set: below it even a list's fixed
	// fields (a glossary, the note itself) would not fit.
	MinBudget = 2_000
)

// Budget is the size an answer must fit in, and whose it is (for the note).
type Budget struct {
	Bytes int
	For   string // "Claude Code", "Codex", "this client", "--max-output"
}

type maxOutputKey struct{}

// WithMaxOutput returns a context whose calls are sized to n bytes whatever the client
// (`resmongw stdio --max-output`, carried in the session preamble); n <= 0 leaves the
// client's own budget. Below MinBudget, MinBudget.
func WithMaxOutput(ctx context.Context, n int) context.Context {
	if n <= 0 {
		return ctx
	}
	return context.WithValue(ctx, maxOutputKey{}, max(n, MinBudget))
}

// ClientName is who is calling: clientInfo.name from the request's own _meta on protocol
// 2026-07-28, else from the session's initialize ("" when the client gave none).
func ClientName(req *mcp.CallToolRequest) string {
	if req == nil {
		return ""
	}
	if ci := req.ClientInfo(); ci != nil {
		return ci.Name
	}
	return ""
}

// BudgetFor is the budget of one call: --max-output when the session set one, else the
// client's (by its clientInfo name), else DefaultBudget.
func BudgetFor(ctx context.Context, client string) Budget {
	if n, ok := ctx.Value(maxOutputKey{}).(int); ok {
		return Budget{Bytes: n, For: "--max-output"}
	}
	switch name := strings.ToLower(client); {
	case name == "claude-code":
		return Budget{Bytes: ClaudeCodeBudget, For: "Claude Code"}
	case strings.HasPrefix(name, "codex"): // codex-mcp-client
		return Budget{Bytes: CodexBudget, For: "Codex"}
	}
	return Budget{Bytes: DefaultBudget, For: "this client"}
}

// reRun runs the tool again with other arguments (a smaller limit).
type reRun func(args map[string]any) (any, *backend.ToolError)

// fitAnswer sizes a successful answer of t to b. Answers of tools with neither Paging nor
// Whole (one record each) are sent as they are.
func fitAnswer(t *tools.Tool, args map[string]any, payload any, b Budget, again reRun) (any, *backend.ToolError) {
	if t.Paging == nil && !t.Whole {
		return payload, nil
	}
	size := encodedLen(payload)
	if size <= b.Bytes {
		return payload, nil
	}
	if t.Whole {
		return nil, tooLargeToSend(t.Name, size, b)
	}
	return cutList(t, args, payload, b, again)
}

// tooLargeToSend refuses an answer that cannot be cut. A partial export would be a file
// that looks complete (a bibliography missing papers); an error cannot be mistaken for one,
// and says how to ask for less.
func tooLargeToSend(tool string, size int, b Budget) *backend.ToolError {
	return backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf(
		"This %s answer is %d bytes, more than the %d bytes %s takes whole, and a file cut short would look complete. "+
			"Ask for fewer papers: pass doc_ids in batches (get_execution_results lists a run's papers with their ids, page by page), "+
			"or use format csv, the smallest.", tool, size, b.Bytes, b.For),
		map[string]any{"size_bytes": size, "budget_bytes": b.Bytes})
}

// cutList keeps the longest run of whole items that fits, sets count, and adds the note
// (noteKey). For a cursor tool the shorter page is asked of the backend again, so next_cursor
// and has_more are its own and continue right after the last item kept.
func cutList(t *tools.Tool, args map[string]any, payload any, b Budget, again reRun) (any, *backend.ToolError) {
	m, ok := payload.(map[string]any)
	if !ok {
		return payload, nil
	}
	items, ok := m[t.Paging.Items].([]any)
	if !ok {
		return payload, nil
	}
	asked := len(items)
	k := fitting(t, args, m, items, asked, b)
	if k < 0 {
		return nil, tooLargeToSend(t.Name, encodedLen(payload), b)
	}
	if t.Paging.By == toolfacts.PageCursor {
		// Ask for the page that fits (at least one item: one too large to send is skipped,
		// and the cursor must step past it). Re-asked at most a few times in case the
		// corpus changed between the two answers.
		for range 3 {
			p, terr := again(argsWith(args, "limit", max(k, 1)))
			if terr != nil {
				return nil, terr
			}
			pm, ok := p.(map[string]any)
			if !ok {
				return p, nil
			}
			pItems, _ := pm[t.Paging.Items].([]any)
			k2 := fitting(t, args, pm, pItems, asked, b)
			if k2 >= min(k, len(pItems)) {
				return page(t, args, pm, pItems, min(k, len(pItems)), asked, b), nil
			}
			k = k2
		}
		return nil, backend.NewError(backend.CodeUpstreamError, "resmon's answer kept changing while it was being cut to this client's size; try again.", nil)
	}
	return page(t, args, m, items, k, asked, b), nil
}

// fitting is the most items of the page that fit in b with the note (-1: not even none).
func fitting(t *tools.Tool, args map[string]any, m map[string]any, items []any, asked int, b Budget) int {
	fits := func(k int) bool { return encodedLen(page(t, args, m, items, k, asked, b)) <= b.Bytes }
	k := sort.Search(len(items)+1, func(k int) bool { return !fits(k) }) - 1
	for k >= 0 && !fits(k) { // the note's numbers change length with k
		k--
	}
	return k
}

// noteKey is the key of the note on a cut answer.
const noteKey = "left_out"

// page is the answer with its first k items (k == 0 with items left: the first item alone is
// too large to send, and is skipped), count set, and the note. asked is how many items the
// answer held before it was cut.
func page(t *tools.Tool, args map[string]any, m map[string]any, items []any, k, asked int, b Budget) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, v := range m {
		out[key] = v
	}
	k = max(k, 0)
	out[t.Paging.Items] = items[:k]
	if _, ok := m["count"]; ok {
		out["count"] = k
	}
	note := map[string]any{"count": asked - k}
	why := fmt.Sprintf("%d of the %d items of this page were left out so the answer fits the %d bytes %s takes whole; no item was cut in half.",
		asked-k, asked, b.Bytes, b.For)
	if k == 0 && len(items) > 0 {
		why = fmt.Sprintf("The next item alone is %d bytes, more than the %d bytes %s takes whole, so it was left out (the rest of the page with it).",
			encodedLen(items[0]), b.Bytes, b.For)
		note["too_large"] = itemID(items[0])
	}
	note["why"] = why
	switch t.Paging.By {
	case toolfacts.PageOffset:
		next := tools.OffsetArg(args) + max(k, 1)
		note["next_offset"] = next
		note["how"] = "Call " + t.Name + " again with offset " + strconv.Itoa(next) + " and the same other arguments to continue."
	case toolfacts.PageCursor:
		note["how"] = "Call " + t.Name + " again with cursor set to next_cursor and the same other arguments: the items left out come first."
	default:
		note["how"] = t.Name + " does not page: the items kept are the first in its order; ask with a smaller limit for fewer."
	}
	out[noteKey] = note
	return out
}

// itemID names an item for the note: its id (or doc_id, or slug) when it has one.
func itemID(item any) any {
	r := tools.ValMap(item)
	for _, k := range []string{"id", "doc_id", "slug"} {
		if v, ok := r[k]; ok {
			return v
		}
	}
	return nil
}

// argsWith is args with key set to n (as the decoder gives numbers).
func argsWith(args map[string]any, key string, n int) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	out[key] = json.Number(strconv.Itoa(n))
	return out
}

// encodedLen is the size of v as the answer's text (what toolResult sends).
func encodedLen(v any) int {
	s, err := encodePayload(v)
	if err != nil {
		return 0 // toolResult turns it into a small internal_error
	}
	return len(s)
}
