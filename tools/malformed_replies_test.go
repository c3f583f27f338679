package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// No silent empty successes: a 2xx reply that is not the shape a tool reads is upstream_error,
// for every tool. An empty list ([] where a list is the answer) is a real answer and passes.

const htmlPage = "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>"

// replyShapes is what each tool's first backend reply is: an object (with its own keys), a
// list of objects, or the text of an export.
var replyShapes = map[string]string{
	"list_sources": "list", "list_routines": "list", "list_executions": "list", "get_execution_results": "list",
	"export_references": "text",
}

// malformedBodies are decoded replies that are not the shape, per shape.
var malformedBodies = map[string][]any{
	"object": {nil, htmlPage, map[string]any{}, map[string]any{"unexpected": "shape"}, []any{}, []any{map[string]any{"id": 1}}, "plain text"},
	"list":   {nil, htmlPage, map[string]any{}, map[string]any{"routines": []any{}}, []any{"x"}, []any{nil}, []any{[]any{}}, "plain text"},
	"text":   {htmlPage, map[string]any{}, map[string]any{"a": 1}, []any{}},
}

func TestMalformedSuccessRepliesAreUpstreamErrorsForEveryTool(t *testing.T) {
	for _, tool := range Tools {
		shape := replyShapes[tool.Name]
		if shape == "" {
			shape = "object"
		}
		for _, body := range malformedBodies[shape] {
			if tool.Name == "update_settings" && len(ValMap(body)) > 0 {
				// A group's keys are whatever resmon says they are: {"unexpected": …} is
				// answered as a group without the key asked for, naming the keys it has.
				continue
			}
			api := newFakeAPI()
			api.override = func(*backend.Request) (any, error, bool) { return body, nil, true }
			out, te := callTool(t, api, tool.Name, example(tool.Name))
			label := tool.Name + " given " + strings.TrimSpace(mustJSON(t, body))
			if te == nil || te.Code != backend.CodeUpstreamError {
				t.Errorf("%s: got %v / %s, want upstream_error", label, te, strings.TrimSpace(mustJSON(t, out)))
				continue
			}
			if tool.RequiresConfirmation && tool.Name != "update_settings" && !strings.Contains(te.Message, "may have been made") {
				t.Errorf("%s: the answer to a change was unreadable, but the message does not say it may have been made: %s", label, te.Message)
			}
		}
	}
}

// A reply that is right in its first part and wrong in a later one fails too: a delivery
// summary or per-basis counts made up from {} would be a false fact.
func TestMalformedLaterRepliesAreUpstreamErrors(t *testing.T) {
	for _, c := range []struct {
		tool, path string
		body       any
	}{
		{"get_routine", "/api/routines/1/deliveries", map[string]any{}},
		{"get_routine", "/api/routines/1/deliveries", map[string]any{"summary": "none"}},
		{"get_watch_profile", "/api/profiles/1/matches", map[string]any{}},
		{"get_watch_profile", "/api/profiles/1/matches", map[string]any{"total": 3}},
		{"get_profile_matches", "/api/profiles/1/matches", map[string]any{"matches": []any{}}},
		{"search_corpus", "/api/explorer/search", map[string]any{"results": "none"}},
		{"find_similar", "/api/documents/1/similar", map[string]any{"neighbours": map[string]any{}}},
		{"list_watch_profiles", "/api/profiles", map[string]any{"profiles": nil}},
		{"get_watchdog_findings", "/api/watchdog", map[string]any{"findings": []any{"x"}}},
		{"run_sweep", "/api/search/sweep", map[string]any{"execution_id": nil}},
		{"run_routine", "/api/routines/1/run", map[string]any{"execution_id": "43"}},
	} {
		api := newFakeAPI()
		api.override = func(r *backend.Request) (any, error, bool) { return c.body, nil, r.Path == c.path }
		_, te := callTool(t, api, c.tool, example(c.tool))
		if te == nil || te.Code != backend.CodeUpstreamError {
			t.Errorf("%s with %s = %s: got %v, want upstream_error", c.tool, c.path, strings.TrimSpace(mustJSON(t, c.body)), te)
		}
	}
}

// The list tools over real HTTP: a 200 whose body is a web page, empty, null or {} never
// becomes a zero count.
func TestListToolsRefuseMalformed200sFromTheBackend(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	bodies := []resmonsim.Fault{
		{Status: 200, Body: htmlPage, ContentType: "text/html; charset=utf-8"},
		{Status: 200, EmptyBody: true},
		{Status: 200, Body: "null"},
		{Status: 200, Body: "{}"},
		{Status: 200, Body: "[]", ContentType: "application/json"},
	}
	lists := []struct {
		tool, prefix string
		emptyListOK  bool // [] is this tool's real "there are none"
	}{
		{"list_sources", "/api/repositories/catalog", true},
		{"list_routines", "/api/routines", true},
		{"list_executions", "/api/executions", true},
		{"list_watch_profiles", "/api/profiles", false},
		{"get_profile_matches", "/api/profiles/1/matches", false},
		{"get_execution_results", "/api/executions/1/references", true},
		{"search_corpus", "/api/explorer/search", false},
		{"find_similar", "/api/documents/1/similar", false},
		{"get_watchdog_findings", "/api/watchdog", false},
	}
	for _, l := range lists {
		for _, f := range bodies {
			f.PathPrefix, f.Count = l.prefix, 1
			sim.SetFault(f)
			out, te := callTool(t, api, l.tool, example(l.tool))
			sim.ClearFaults()
			label := l.tool + " given " + f.Body
			if f.EmptyBody {
				label = l.tool + " given an empty body"
			}
			if f.Body == "[]" && l.emptyListOK {
				if te != nil {
					t.Errorf("%s: an empty list is a real answer, got %v", label, te)
				}
				continue
			}
			if te == nil || te.Code != backend.CodeUpstreamError {
				t.Errorf("%s: got %v / %s, want upstream_error", label, te, mustJSON(t, out))
			}
		}
	}
}
