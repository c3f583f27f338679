package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 26.4: say only what the reply shows. A reply whose rows lack what a tool reports
// from them ([{}]) became rows of nulls with made-up facts (list_routines: "active": false);
// every list tool now answers upstream_error for it, as for any other malformed reply.
func TestRowsWithoutTheirFieldsAreUpstreamErrors(t *testing.T) {
	empty := []any{map[string]any{}}
	for _, c := range []struct {
		tool, path string
		body       any
	}{
		{"list_routines", "/api/routines", empty},
		{"list_routines", "/api/routines", []any{map[string]any{"id": 1, "name": "w"}}}, // no is_active
		{"list_executions", "/api/executions", empty},
		{"list_sources", "/api/repositories/catalog", empty},
		{"list_sources", "/api/repositories/catalog", []any{map[string]any{"slug": "arxiv"}}}, // key requirement unknown
		{"get_execution_results", "/api/executions/1/references", empty},
		{"export_references", "/api/executions/1/references", empty},
		{"list_watch_profiles", "/api/profiles", map[string]any{"profiles": empty}},
		{"get_profile_matches", "/api/profiles/1/matches", map[string]any{"matches": empty, "total": 1, "by_basis": map[string]any{}}},
		{"get_profile_matches", "/api/profiles/1/matches", map[string]any{"matches": []any{}, "total": 0}}, // no by_basis
		{"search_corpus", "/api/explorer/search", map[string]any{"results": empty, "sort": "newest"}},
		{"search_corpus", "/api/explorer/search", map[string]any{"results": []any{}}}, // which order was served is unknown
		{"find_similar", "/api/documents/1/similar", map[string]any{"neighbours": empty}},
		{"get_watchdog_findings", "/api/watchdog", map[string]any{"findings": empty}},
	} {
		args := example(c.tool)
		if c.tool == "export_references" {
			args = map[string]any{"exec_id": 1, "format": "json"}
		}
		api := newFakeAPI()
		api.override = func(r *backend.Request) (any, error, bool) { return c.body, nil, r.Path == c.path }
		out, te := callTool(t, api, c.tool, args)
		if te == nil || te.Code != backend.CodeUpstreamError {
			t.Errorf("%s given %s: got %v / %s, want upstream_error", c.tool, strings.TrimSpace(mustJSON(t, c.body)), te, strings.TrimSpace(mustJSON(t, out)))
		}
	}
}

// Issue 26.4, over real HTTP: a bare JSON null where a tool expects an object, a list or the
// text of an export is upstream_error; export_references answered "" for it. An empty body
// is still an empty export (an empty file), as before.
func TestNullIsNoAnswerButAnEmptyExportIsAnEmptyFile(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	for _, c := range []struct {
		tool, prefix, contentType string
		args                      map[string]any
	}{
		{"export_references", "/api/executions/1/references", "application/x-bibtex", map[string]any{"exec_id": 1, "format": "bibtex"}},
		{"export_references", "/api/export/references", "text/csv; charset=utf-8", map[string]any{"doc_ids": []any{1}, "format": "csv"}},
		{"export_references", "/api/export/references", "application/json", map[string]any{"doc_ids": []any{1}, "format": "json"}},
		{"health", "/api/health", "application/json", nil},
		{"list_routines", "/api/routines", "application/json", nil},
		{"get_execution", "/api/executions/1", "application/json", map[string]any{"exec_id": 1}},
	} {
		sim.SetFault(resmonsim.Fault{PathPrefix: c.prefix, Status: 200, Body: "null", ContentType: c.contentType, Count: 1})
		out, te := callTool(t, api, c.tool, c.args)
		sim.ClearFaults()
		if te == nil || te.Code != backend.CodeUpstreamError || !strings.Contains(te.Message, "null") {
			t.Errorf("%s given a null %s body: got %v / %s, want upstream_error naming null", c.tool, c.contentType, te, strings.TrimSpace(mustJSON(t, out)))
		}
	}
	sim.SetFault(resmonsim.Fault{PathPrefix: "/api/executions/1/references", Status: 200, EmptyBody: true, ContentType: "application/x-bibtex", Count: 1})
	out, te := callTool(t, api, "export_references", map[string]any{"exec_id": 1, "format": "bibtex"})
	sim.ClearFaults()
	if te != nil || out != "" {
		t.Errorf("an empty bibtex export: got %v / %#v, want the empty file", te, out)
	}
}

// Issue 26.4: create_watch_profile said "Created with an ORCID" whenever the reply had no
// basis_warning, whatever the reply held. It says so only when the created profile in the
// reply shows an ORCID.
func TestCreateWatchProfileSaysOnlyWhatTheReplyShows(t *testing.T) {
	for _, c := range []struct {
		name      string
		reply     map[string]any
		args      map[string]any
		want, not string
	}{
		{"no ORCID, no warning, though one was sent", map[string]any{"id": 9, "identifiers": map[string]any{}},
			map[string]any{"name": "Ada Lovelace", "orcid": "0000-0002-1825-0097"}, "shows neither an ORCID", "with an ORCID"},
		{"a bare id", map[string]any{"id": 9}, map[string]any{"name": "Ada Lovelace"}, "shows neither an ORCID", "with an ORCID"},
		{"ORCID as an object", map[string]any{"id": 9, "identifiers": map[string]any{"orcid": map[string]any{"value": "0000-0002-1825-0097"}}},
			map[string]any{"name": "Ada Lovelace", "orcid": "0000-0002-1825-0097"}, "Created with an ORCID", "shows neither"},
		{"ORCID as text", map[string]any{"id": 9, "identifiers": map[string]any{"orcid": "0000-0002-1825-0097"}},
			map[string]any{"name": "Ada Lovelace", "orcid": "0000-0002-1825-0097"}, "Created with an ORCID", "shows neither"},
		{"a basis warning", map[string]any{"id": 9, "basis_warning": "Name matches only."}, map[string]any{"name": "Ada Lovelace"},
			"Name matches only.", "with an ORCID"},
	} {
		api := newFakeAPI()
		api.override = func(r *backend.Request) (any, error, bool) { return c.reply, nil, r.Path == "/api/profiles" }
		out, te := callTool(t, api, "create_watch_profile", c.args)
		if te != nil {
			t.Fatalf("%s: %v", c.name, te)
		}
		detail, _ := out.(map[string]any)["detail"].(string)
		if !strings.Contains(detail, c.want) || strings.Contains(detail, c.not) {
			t.Errorf("%s: detail %q, want %q and never %q", c.name, detail, c.want, c.not)
		}
	}
}

// Issue 26.4 (the audit): get_routine made up 0 destinations for a delivery summary without
// counts, and create_routine said "Created inactive" even when the record read back showed
// the routine active. Both now say what the reply shows.
func TestRoutineAnswersSayOnlyWhatTheReplyShows(t *testing.T) {
	api := newFakeAPI()
	api.override = func(r *backend.Request) (any, error, bool) {
		return map[string]any{"summary": map[string]any{}}, nil, r.Path == "/api/routines/1/deliveries"
	}
	out, te := callTool(t, api, "get_routine", example("get_routine"))
	if te != nil {
		t.Fatal(te)
	}
	d := out.(map[string]any)["delivery"].(map[string]any)
	if d["enabled_target_count"] != nil || d["awaiting_review"] != nil {
		t.Errorf("counts the reply does not hold were made up: %v", d)
	}

	api = newFakeAPI()
	api.override = func(r *backend.Request) (any, error, bool) {
		switch {
		case r.Method == "POST" && r.Path == "/api/routines":
			return map[string]any{"id": 5, "name": "Weekly"}, nil, true
		case r.Method == "GET" && r.Path == "/api/routines/5":
			return map[string]any{"id": 5, "name": "Weekly", "is_active": 1}, nil, true
		}
		return nil, nil, false
	}
	out, te = callTool(t, api, "create_routine", example("create_routine"))
	if te != nil {
		t.Fatal(te)
	}
	if detail := out.(map[string]any)["detail"].(string); strings.Contains(detail, "Created inactive") || !strings.Contains(detail, "shows it active") {
		t.Errorf("create_routine with a record that is active: detail %q", detail)
	}
}
