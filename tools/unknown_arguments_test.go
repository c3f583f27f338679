package tools

import (
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
)

// Issue 26.11: a misspelt optional argument was dropped and the call ran without it (a
// sweep with max_result ran with the default 50; a read with expected_runtime, meant as
// expected_runtime_id, answered from whatever app was running). Every tool now refuses an argument its schema does not declare, naming the
// nearest one it does, and sends nothing.
func TestUnknownArgumentsAreRefusedNamingTheNearest(t *testing.T) {
	for _, c := range []struct {
		tool, arg, near string
		args            map[string]any
	}{
		{"get_execution", "expected_runtime", "expected_runtime_id", map[string]any{"exec_id": 1, "expected_runtime": fakeRuntimeID}},
		{"run_sweep", "max_result", "max_results", map[string]any{"query": "q", "sources": []any{"arxiv"}, "max_result": 5}},
		{"search_corpus", "sorces", "sources", map[string]any{"query": "q", "sorces": []any{"arxiv"}}},
		{"list_routines", "activeOnly", "active_only", map[string]any{"activeOnly": true}},
		{"create_routine", "entity.profileid", "entity.profile_id", map[string]any{"name": "w", "keywords": []any{"k"}, "sources": []any{"arxiv"},
			"schedule": "0 7 * * 1", "entity": map[string]any{"profileid": 1, "mode": "new_papers"}}},
	} {
		api := newFakeAPI()
		_, te := callTool(t, api, c.tool, c.args)
		if te == nil || te.Code != backend.CodeInvalidArgument || !strings.Contains(te.Message, "'"+c.arg+"'") ||
			!strings.Contains(te.Message, "did you mean '"+c.near+"'") || te.Detail["did_you_mean"] != c.near {
			t.Errorf("%s with %s: got %v, want invalid_argument naming %s", c.tool, c.arg, te, c.near)
		}
		if len(api.calls) != 0 {
			t.Errorf("%s with %s: %d requests sent, want none", c.tool, c.arg, len(api.calls))
		}
	}
	for _, tool := range Tools {
		args := map[string]any{}
		for k, v := range example(tool.Name) {
			args[k] = v
		}
		args["zzzz_not_an_argument"] = 1
		api := newFakeAPI()
		_, te := callTool(t, api, tool.Name, args)
		if te == nil || te.Code != backend.CodeInvalidArgument || !strings.Contains(te.Message, "Unknown argument 'zzzz_not_an_argument'") || len(api.calls) != 0 {
			t.Errorf("%s with an unknown argument: got %v after %d requests, want invalid_argument and none", tool.Name, te, len(api.calls))
		}
	}
	// An argument a handler answers itself is not "unknown": search_corpus's offset still gets
	// its own sentence (how to page).
	_, te := callTool(t, newFakeAPI(), "search_corpus", map[string]any{"query": "q", "offset": 20})
	if te == nil || te.Message != offsetRefusal {
		t.Errorf("search_corpus offset: %v", te)
	}
}
