package tools

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/toolfacts"
)

// Every request a tool sends resolves to a route the backend really has, and none touches an
// endpoint the contract excludes.

// routeCase is one tool call the route test makes.
type routeCase struct {
	tool string
	args map[string]any
}

// routeCases drives every tool with its representative arguments plus the extra cases that
// reach every method-and-path pair (each settings group, each analytics view, export both
// ways, identity-bound reads, semantic search).
func routeCases() []routeCase {
	var cases []routeCase
	for _, tool := range Tools {
		cases = append(cases, routeCase{tool.Name, example(tool.Name)})
	}
	settingsKey := map[string]map[string]any{
		"ai": {"ai_effort": "low"}, "assistant": {"assistant_effort": "high"}, "email": {"smtp_port": "465"},
		"embeddings": {"embedding_model": "nomic"}, "cloud": {"cloud_provider": "gdrive"},
		"storage": {"pdf_policy": "archive"}, "notifications": {"notify_manual": "false"},
	}
	for _, g := range toolfacts.SettingsGroups {
		cases = append(cases, routeCase{"update_settings", map[string]any{"group": g, "settings": settingsKey[g]}})
	}
	for view := range analyticsPaths {
		cases = append(cases, routeCase{"get_analytics", map[string]any{"view": view, "window": "30d"}})
	}
	return append(cases,
		routeCase{"export_references", map[string]any{"doc_ids": []any{1, 2}, "format": "ris"}},
		routeCase{"health", map[string]any{"expected_runtime_id": fakeRuntimeID}},
		routeCase{"get_execution", map[string]any{"exec_id": 1, "expected_runtime_id": fakeRuntimeID}},
		routeCase{"search_corpus", map[string]any{"query": "x", "mode": "semantic", "cursor": "5"}},
		routeCase{"list_watch_profiles", map[string]any{"kind": "person"}},
		routeCase{"list_executions", map[string]any{"routine_id": 1, "status": "completed"}},
		routeCase{"get_watchdog_findings", map[string]any{"include_muted": true}},
	)
}

// excluded reports whether a request touches an endpoint the contract excludes on purpose.
func excluded(method, path string) string {
	switch {
	case strings.HasPrefix(path, "/api/admin/"):
		return "admin"
	case strings.HasPrefix(path, "/api/credentials/") || (path == "/api/credentials" && method != http.MethodGet):
		return "credential write"
	case strings.HasPrefix(path, "/api/settings/execution"):
		return "execution settings"
	case method == http.MethodDelete:
		return "delete"
	case strings.HasPrefix(path, "/api/service/"):
		return "service install"
	case strings.HasPrefix(path, "/api/cloud/"):
		return "cloud linking"
	case strings.Contains(path, "/progress/stream"):
		return "progress stream"
	case path == "/api/lifecycle/check":
		return "lifecycle check"
	case strings.HasSuffix(path, "/report"):
		return "full report"
	}
	return ""
}

func TestRoutesResolve(t *testing.T) {
	type pair struct{ method, path string }
	sent := map[pair]string{} // pair → tool that sent it
	for _, c := range routeCases() {
		api := newFakeAPI()
		if _, te := callTool(t, api, c.tool, c.args); te != nil {
			t.Fatalf("%s %v: %s %s", c.tool, c.args, te.Code, te.Message)
		}
		for _, r := range api.requests() {
			sent[pair{r.Method, r.Path}] = c.tool
		}
	}
	resolved := map[resmonsim.Route]bool{}
	keys := make([]pair, 0, len(sent))
	for p := range sent {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].method+keys[i].path < keys[j].method+keys[j].path })
	for _, p := range keys {
		t.Run(p.method+" "+p.path, func(t *testing.T) {
			if why := excluded(p.method, p.path); why != "" {
				t.Fatalf("%s sent an excluded endpoint (%s)", sent[p], why)
			}
			route, ok := resmonsim.Resolve(p.method, p.path)
			if !ok {
				t.Fatalf("%s sent a request that resolves to no backend route", sent[p])
			}
			resolved[route] = true
		})
	}
	if len(resolved) != 46 {
		var names []string
		for r := range resolved {
			names = append(names, r.Method+" "+r.Pattern)
		}
		sort.Strings(names)
		t.Fatalf("%d distinct method-and-path pairs, want 46:\n%s", len(resolved), strings.Join(names, "\n"))
	}
}

// Arguments reach the handlers as the server decodes them (json.Number, []any, map[string]any);
// every route case must behave the same as with Go literals.
func TestArgumentsAsDecodedJSON(t *testing.T) {
	for _, c := range routeCases() {
		raw, err := json.Marshal(c.args)
		if err != nil {
			t.Fatal(err)
		}
		decoded, ok := decodeJSONText(string(raw)).(map[string]any)
		if !ok {
			t.Fatalf("%s: args did not decode to an object", c.tool)
		}
		literal, viaJSON := newFakeAPI(), newFakeAPI()
		outA, teA := callTool(t, literal, c.tool, c.args)
		outB, teB := callTool(t, viaJSON, c.tool, decoded)
		if teA != nil || teB != nil {
			t.Fatalf("%s: errors %v / %v", c.tool, teA, teB)
		}
		if a, b := mustJSON(t, outA), mustJSON(t, outB); a != b {
			t.Errorf("%s: answers differ:\n%s\n%s", c.tool, a, b)
		}
		reqA, reqB := literal.requests(), viaJSON.requests()
		if a, b := mustJSON(t, reqA), mustJSON(t, reqB); a != b {
			t.Errorf("%s: requests differ:\n%s\n%s", c.tool, a, b)
		}
	}
}
