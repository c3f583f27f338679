package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// budgetSession is a client session named client on srv; the server's side of it carries
// maxOutput (0: none), as the daemon's does from the preamble.
func budgetSession(t *testing.T, srv *mcp.Server, client string, maxOutput int, protocol string) *mcp.ClientSession {
	t.Helper()
	return budgetSessionCtx(t, srv, client, protocol, WithMaxOutput(backendtest.Context(t), maxOutput))
}

// budgetSessionCtx is budgetSession with the server side's context given (a budget below
// MinBudget can only be set this way).
func budgetSessionCtx(t *testing.T, srv *mcp.Server, client, protocol string, sctx context.Context) *mcp.ClientSession {
	t.Helper()
	ctx := backendtest.Context(t)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(sctx, WrapTransport(st, tools.Tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx, ct, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// budgetCall calls name and returns the answer's text, checking it is valid JSON and within
// limit bytes (0: no limit).
func budgetCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, meta mcp.Meta, limit int) (map[string]any, bool, string) {
	t.Helper()
	res, err := cs.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := coreText(t, res)
	if limit > 0 && len(text) > limit {
		t.Fatalf("%s %v: answer is %d bytes, over the %d-byte budget", name, args, len(text), limit)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s: the answer is not JSON (%v): %.200s", name, err, text)
	}
	return m, res.IsError, text
}

// budgetWorld is a simulated backend with a large corpus and one server over it.
func budgetWorld(t *testing.T, papers int) (*mcp.Server, *resmonsim.Sim) {
	t.Helper()
	sim, c := backendtest.StartSimClient(t, resmonsim.Options{Papers: papers})
	return NewServer(c, nil), sim
}

// listArgs are arguments that give each list tool of the table a long list over the
// simulator's corpus (the largest execution and profile, found through the tools).
func listArgs(t *testing.T, full *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	biggest := func(tool, items, idKey, sizeKey string) any {
		m, _, _ := budgetCall(t, full, tool, map[string]any{"limit": 100}, nil, 0)
		var best any
		bestN := -1.0
		for _, it := range tools.ValList(m[items]) {
			r := tools.ValMap(it)
			if n, _ := r[sizeKey].(float64); n > bestN {
				best, bestN = r[idKey], n
			}
		}
		return best
	}
	execID := biggest("list_executions", "executions", "id", "result_count")
	var profileID any
	bestTotal := -1.0
	pl, _, _ := budgetCall(t, full, "list_watch_profiles", map[string]any{"limit": 100}, nil, 0)
	for _, p := range tools.ValList(pl["profiles"]) {
		id := tools.ValMap(p)["id"]
		m, _, _ := budgetCall(t, full, "get_profile_matches", map[string]any{"profile_id": id, "limit": 1}, nil, 0)
		if n, _ := m["total"].(float64); n > bestTotal {
			profileID, bestTotal = id, n
		}
	}
	return map[string]map[string]any{
		"search_corpus":         {"query": "model", "limit": 100},
		"find_similar":          {"doc_id": 1, "limit": 100},
		"list_sources":          {"limit": 100},
		"list_routines":         {"limit": 100},
		"list_executions":       {"limit": 100},
		"get_execution_results": {"exec_id": execID, "limit": 100},
		"list_watch_profiles":   {"limit": 100},
		"get_profile_matches":   {"profile_id": profileID, "limit": 100},
	}
}

func with(args map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for key, val := range args {
		out[key] = val
	}
	out[k] = v
	return out
}

// itemsOf returns the items of an answer, each as its exact JSON (so comparing them also
// shows that no item was altered or cut).
func itemsOf(t *testing.T, m map[string]any, key string) []string {
	t.Helper()
	l, ok := m[key].([]any)
	if !ok {
		t.Fatalf("answer without its %s list: %v", key, m)
	}
	out := make([]string, len(l))
	for i, it := range l {
		b, _ := json.Marshal(it)
		out[i] = string(b)
	}
	return out
}

// walk pages through tool with args on cs the way a model would, following the tool's own
// paging fields (and the note's next_offset when there is one), and returns every item seen
// in order and how many answers were cut. each is called with every answer and the args
// that asked for it.
func walk(t *testing.T, cs *mcp.ClientSession, tool *tools.Tool, args map[string]any, limit int, each func(args, m map[string]any)) (seen []string, cuts int) {
	t.Helper()
	for calls := 0; ; calls++ {
		if calls > 500 {
			t.Fatalf("%s: paging did not end after 500 calls", tool.Name)
		}
		m, isErr, _ := budgetCall(t, cs, tool.Name, args, nil, limit)
		if isErr {
			t.Fatalf("%s %v: error %v", tool.Name, args, m)
		}
		if each != nil {
			each(args, m)
		}
		items := itemsOf(t, m, tool.Paging.Items)
		seen = append(seen, items...)
		note, cut := m[noteKey].(map[string]any)
		if cut {
			cuts++
		}
		switch tool.Paging.By {
		case toolfacts.PageNone:
			return seen, cuts
		case toolfacts.PageCursor:
			if m["has_more"] != true {
				return seen, cuts
			}
			args = with(args, "cursor", m["next_cursor"])
		case toolfacts.PageOffset:
			off, _ := args["offset"].(int)
			next := off + len(items)
			if cut {
				n, _ := note["next_offset"].(float64)
				if int(n) != max(next, off+1) {
					t.Fatalf("%s: next_offset %v after %d items at offset %d", tool.Name, note["next_offset"], len(items), off)
				}
				next = int(n)
			}
			total, _ := m["total"].(float64)
			if next >= int(total) {
				return seen, cuts
			}
			args = with(args, "offset", next)
		}
	}
}

// Every list tool of the table, under a small budget: each answer is valid JSON within the
// budget, holds whole items only, and says how many of its page it left out; following the
// tool's own paging fields to the end sees every item exactly once, in order.
func TestBudgetEveryListToolPagesToTheEndUnderASmallBudget(t *testing.T) {
	srv, _ := budgetWorld(t, 300)
	full := budgetSession(t, srv, "test", 1<<30, "")
	argsFor := listArgs(t, full)
	tested := 0
	for i := range tools.Tools {
		tool := &tools.Tools[i]
		if tool.Paging == nil {
			continue
		}
		tested++
		t.Run(tool.Name, func(t *testing.T) {
			args, ok := argsFor[tool.Name]
			if !ok {
				t.Fatalf("no arguments for list tool %s: add them to listArgs", tool.Name)
			}
			want, _ := walk(t, full, tool, args, 0, nil)
			// MinBudget, or less for a list shorter than that (a few routines), so that
			// every tool is cut.
			_, _, first := budgetCall(t, full, tool.Name, args, nil, 0)
			budget := min(MinBudget, len(first)-1)
			small := budgetSessionCtx(t, srv, "test", "", context.WithValue(backendtest.Context(t), maxOutputKey{}, budget))
			// The note counts: what was kept plus what it says it left out is the page the
			// same call makes with no budget.
			got, cuts := walk(t, small, tool, args, budget, func(a, m map[string]any) {
				note, ok := m[noteKey].(map[string]any)
				if !ok {
					return
				}
				whole, _, _ := budgetCall(t, full, tool.Name, a, nil, 0)
				kept, asked := len(tools.ValList(m[tool.Paging.Items])), len(tools.ValList(whole[tool.Paging.Items]))
				if n, _ := note["count"].(float64); int(n) != asked-kept {
					t.Errorf("%s %v: note says %v left out; %d of %d were kept", tool.Name, a, note["count"], kept, asked)
				}
				if c, ok := m["count"].(float64); ok && int(c) != kept {
					t.Errorf("%s: count %v, %d items", tool.Name, m["count"], kept)
				}
				if why, _ := note["why"].(string); !strings.Contains(why, fmt.Sprint(budget)) {
					t.Errorf("%s: the note does not name the budget: %q", tool.Name, why)
				}
			})
			if cuts == 0 {
				t.Fatalf("%s: no answer was cut under %d bytes (%d items): the test proves nothing", tool.Name, budget, len(want))
			}
			if tool.Paging.By == toolfacts.PageNone {
				// No paging: the kept items are the first of the whole list.
				if len(got) == 0 || len(got) >= len(want) || strings.Join(got, "\n") != strings.Join(want[:len(got)], "\n") {
					t.Fatalf("%s: kept %d items, not a prefix of the %d", tool.Name, len(got), len(want))
				}
				return
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: paging under the budget saw %d items, the whole list has %d (or they differ)", tool.Name, len(got), len(want))
			}
		})
	}
	if tested != 8 {
		t.Fatalf("%d list tools on the table, want 8", tested)
	}
}

// The simulator's --papers corpus: a keyword search for "model" finds every generated paper.
func TestBudgetSimulatorPapersAreFoundByModel(t *testing.T) {
	srv, _ := budgetWorld(t, 250)
	cs := budgetSession(t, srv, "test", 1<<30, "")
	m, _, _ := budgetCall(t, cs, "search_corpus", map[string]any{"query": "model", "limit": 1}, nil, 0)
	if n, _ := m["total"].(float64); n < 250 {
		t.Fatalf("search for model: total %v, want at least the 250 generated papers", m["total"])
	}
}

// Claude Code and Codex get their own budgets by clientInfo name, from initialize or, on
// 2026-07-28, from each request's _meta; any other client the default; --max-output wins.
func TestBudgetByClient(t *testing.T) {
	srv, _ := budgetWorld(t, 300)
	args := map[string]any{"query": "model", "limit": 100}
	cases := []struct {
		client    string
		protocol  string
		meta      mcp.Meta
		maxOutput int
		want      int
		who       string
	}{
		{client: "claude-code", want: ClaudeCodeBudget, who: "Claude Code"},
		{client: "codex-mcp-client", want: CodexBudget, who: "Codex"},
		{client: "cursor-vscode", want: DefaultBudget, who: "this client"},
		{client: "test", protocol: "2026-07-28", meta: mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "codex-mcp-client", "version": "0.171.0"}},
			want: CodexBudget, who: "Codex"},
		{client: "claude-code", maxOutput: 3000, want: 3000, who: "--max-output"},
		{client: "codex-mcp-client", maxOutput: 40_000, want: 40_000, who: "--max-output"},
		{client: "cursor-vscode", maxOutput: 12_000, want: 12_000, who: "--max-output"},
		{client: "claude-code", maxOutput: 10, want: MinBudget, who: "--max-output"},
	}
	whole := budgetSession(t, srv, "test", 1<<30, "")
	m, _, text := budgetCall(t, whole, "search_corpus", args, nil, 0)
	if len(tools.ValList(m["papers"])) != 100 || len(text) <= CodexBudget || len(text) >= ClaudeCodeBudget {
		t.Fatalf("a page of 100 papers is %d bytes: the cases below need it between %d and %d", len(text), CodexBudget, ClaudeCodeBudget)
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%s_%d", c.client, c.protocol, c.maxOutput), func(t *testing.T) {
			cs := budgetSession(t, srv, c.client, c.maxOutput, c.protocol)
			m, isErr, text := budgetCall(t, cs, "search_corpus", args, c.meta, c.want)
			if isErr {
				t.Fatalf("error: %v", m)
			}
			note, cut := m[noteKey].(map[string]any)
			if wantCut := c.want < len(wholeText(t, whole, args)); cut != wantCut {
				t.Fatalf("cut %v, want %v (answer %d bytes, budget %d)", cut, wantCut, len(text), c.want)
			}
			if !cut {
				return
			}
			why, _ := note["why"].(string)
			if !strings.Contains(why, fmt.Sprintf("%d bytes %s", c.want, c.who)) {
				t.Fatalf("note %q does not name %d bytes %s", why, c.want, c.who)
			}
			// Nearly full: the cut keeps as many whole papers as fit.
			if len(text) < c.want-2000 {
				t.Fatalf("answer %d bytes under a %d budget: more papers would have fit", len(text), c.want)
			}
		})
	}
}

func wholeText(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	_, _, text := budgetCall(t, cs, "search_corpus", args, nil, 0)
	return text
}

func TestBudgetForNames(t *testing.T) {
	ctx := context.Background()
	for name, want := range map[string]int{"claude-code": ClaudeCodeBudget, "Claude-Code": ClaudeCodeBudget,
		"codex-mcp-client": CodexBudget, "codex": CodexBudget, "": DefaultBudget, "claude-ai": DefaultBudget, "inspector-cli": DefaultBudget} {
		if got := BudgetFor(ctx, name).Bytes; got != want {
			t.Errorf("%q: %d, want %d", name, got, want)
		}
	}
	if got := BudgetFor(WithMaxOutput(ctx, 0), "codex").Bytes; got != CodexBudget {
		t.Errorf("--max-output 0 changed the budget to %d", got)
	}
}

// An export that does not fit is refused, with how to ask for less: a file cut short would
// look complete. One that fits is sent whole.
func TestBudgetExportTooLargeSaysHowToNarrow(t *testing.T) {
	srv, _ := budgetWorld(t, 0)
	full := budgetSession(t, srv, "test", 1<<30, "")
	execID := listArgs(t, full)["get_execution_results"]["exec_id"]
	args := map[string]any{"exec_id": execID, "format": "bibtex"}
	res, err := full.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "export_references", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("export: %v %v", err, res)
	}
	size := len(coreText(t, res))
	if size <= MinBudget {
		t.Fatalf("the export is %d bytes: too small to test", size)
	}
	small := budgetSession(t, srv, "test", MinBudget, "")
	m, isErr, _ := budgetCall(t, small, "export_references", args, nil, MinBudget)
	if !isErr || m["error"] != backend.CodeInvalidArgument {
		t.Fatalf("an export over the budget: %v", m)
	}
	msg, _ := m["message"].(string)
	detail := tools.ValMap(m["detail"])
	if !strings.Contains(msg, "doc_ids") || detail["budget_bytes"] != float64(MinBudget) || detail["size_bytes"] != float64(size) {
		t.Fatalf("the refusal does not say how to narrow it or the sizes: %v", m)
	}
	// Sent whole when it fits.
	ok := budgetSession(t, srv, "test", size, "")
	res, err = ok.CallTool(backendtest.Context(t), &mcp.CallToolParams{Name: "export_references", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("an export exactly at the budget was refused: %v %v", err, res)
	}
}

// An item that alone is over the budget is left out, named, and stepped over: paging goes on
// after it rather than stalling on it or cutting it in half.
func TestBudgetItemTooLargeAloneIsSkipped(t *testing.T) {
	big := map[string]any{"id": 7, "title": strings.Repeat("x", 3*MinBudget)}
	small := map[string]any{"id": 8, "title": "fits"}
	b := Budget{Bytes: MinBudget, For: "this client"}
	offsetTool := &tools.Tool{Row: toolfacts.Row{Name: "list_things", Paging: &toolfacts.Paging{Items: "things", By: toolfacts.PageOffset}}}
	out, terr := fitAnswer(offsetTool, map[string]any{"offset": json.Number("4")},
		map[string]any{"things": []any{big, small}, "count": 2, "total": 10}, b, nil)
	backendtest.WantNoErr(t, terr)
	m := out.(map[string]any)
	note := tools.ValMap(m[noteKey])
	if len(tools.ValList(m["things"])) != 0 || m["count"] != 0 || note["next_offset"] != 5 || note["too_large"] != 7 || note["count"] != 2 {
		t.Fatalf("offset: %v", m)
	}
	if encodedLen(m) > MinBudget {
		t.Fatalf("offset: %d bytes", encodedLen(m))
	}
	// A cursor tool asks again for one item, to have the backend's cursor past it.
	cursorTool := &tools.Tool{Row: toolfacts.Row{Name: "search_things", Paging: &toolfacts.Paging{Items: "things", By: toolfacts.PageCursor}}}
	var asked []map[string]any
	again := func(args map[string]any) (any, *backend.ToolError) {
		asked = append(asked, args)
		return map[string]any{"things": []any{big}, "count": 1, "next_cursor": "after-7", "has_more": true}, nil
	}
	out, terr = fitAnswer(cursorTool, map[string]any{"query": "q"},
		map[string]any{"things": []any{big, small}, "count": 2, "next_cursor": "after-8", "has_more": true}, b, again)
	backendtest.WantNoErr(t, terr)
	m = out.(map[string]any)
	if len(asked) != 1 || asked[0]["limit"] != json.Number("1") || asked[0]["query"] != "q" {
		t.Fatalf("asked again with %v", asked)
	}
	if len(tools.ValList(m["things"])) != 0 || m["next_cursor"] != "after-7" || tools.ValMap(m[noteKey])["too_large"] != 7 {
		t.Fatalf("cursor: %v", m)
	}
}

// Answers of tools that return one record are never touched, whatever their size.
func TestBudgetLeavesSingleRecordsAlone(t *testing.T) {
	tool := &tools.Tool{Row: toolfacts.Row{Name: "get_thing"}}
	big := map[string]any{"text": strings.Repeat("y", 3*MinBudget)}
	out, terr := fitAnswer(tool, nil, big, Budget{Bytes: MinBudget}, nil)
	backendtest.WantNoErr(t, terr)
	if out.(map[string]any)["text"] != big["text"] {
		t.Fatal("a record was changed")
	}
}
