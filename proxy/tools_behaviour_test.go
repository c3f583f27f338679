package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Behaviour of each tool against the recording double: arguments, requests, reshaping.

func wantErr(t *testing.T, te *ToolError, code, msgPart string) {
	t.Helper()
	if te == nil {
		t.Fatalf("want %s error containing %q, got success", code, msgPart)
	}
	if te.Code != code || !strings.Contains(te.Message, msgPart) {
		t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, code, msgPart)
	}
}

func wantNoErr(t *testing.T, te *ToolError) {
	t.Helper()
	if te != nil {
		t.Fatalf("unexpected error %s: %s %v", te.Code, te.Message, te.Detail)
	}
}

func paths(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		s := r.Method + " " + r.Path
		if len(r.Query) > 0 {
			s += "?" + r.Query.Encode()
		}
		out = append(out, s)
	}
	return out
}

func TestHealthExpectation(t *testing.T) {
	bad := []any{"", nil, 7, "bad", strings.ToUpper(fakeRuntimeID), "3f0c6a0e-8a0b-1e53-9d0f-2c5b1a7e9d41", "{" + fakeRuntimeID + "}"}
	for _, v := range bad {
		api := newFakeAPI()
		_, te := callTool(t, api, "health", map[string]any{"expected_runtime_id": v})
		wantErr(t, te, CodeInvalidArgument, "expected_runtime_id must be a canonical lowercase UUID4")
		if n := len(api.requests()); n != 0 {
			t.Errorf("%#v: %d requests before validation", v, n)
		}
	}
	api := newFakeAPI()
	out, te := callTool(t, api, "health", nil)
	wantNoErr(t, te)
	if valMap(out)["version"] != "2.3.0" {
		t.Errorf("health not passed through: %v", out)
	}
	if r := api.requests()[0]; r.Query != nil || r.ExpectedRuntimeID != "" {
		t.Errorf("unbound health carried an expectation: %+v", r)
	}

	api.reset()
	_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": fakeRuntimeID})
	wantNoErr(t, te)
	r := api.requests()[0]
	if r.Query.Get("expected_runtime_id") != fakeRuntimeID || r.ExpectedRuntimeID != fakeRuntimeID {
		t.Errorf("expectation not sent: %+v", r)
	}

	other := "11111111-2222-4333-8444-555555555555"
	_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": other})
	wantErr(t, te, CodeInstanceMismatch, "different running app")
	if te.Detail["expected_runtime_id"] != other || te.Detail["actual_runtime_id"] != fakeRuntimeID {
		t.Errorf("detail = %v", te.Detail)
	}

	legacy := newFakeAPI()
	legacy.override = func(r *Request) (any, error, bool) {
		return decodeJSONText(`{"status":"ok","version":"2.1.0"}`), nil, true
	}
	_, te = callTool(t, legacy, "health", map[string]any{"expected_runtime_id": fakeRuntimeID})
	wantErr(t, te, CodeIdentityUnavailable, "runtime identity")
}

func TestGetExecutionExpectation(t *testing.T) {
	api := newFakeAPI()
	// The expectation is judged before exec_id.
	_, te := callTool(t, api, "get_execution", map[string]any{"expected_runtime_id": "bad"})
	wantErr(t, te, CodeInvalidArgument, "UUID4")
	_, te = callTool(t, api, "get_execution", map[string]any{})
	wantErr(t, te, CodeInvalidArgument, "'exec_id' is required.")

	out, te := callTool(t, api, "get_execution", map[string]any{"exec_id": "7"})
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions/7"}) {
		t.Errorf("unbound: %v", got)
	}
	if valMap(out)["status"] != "completed" {
		t.Errorf("not passed through: %v", out)
	}

	api.reset()
	q := "expected_runtime_id=" + fakeRuntimeID
	out, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/health?" + q, "GET /api/executions/7?" + q}) {
		t.Errorf("bound: %v", got)
	}
	if valMap(out)["identity"] == nil {
		t.Error("identity dropped from the execution body")
	}

	// A different app at preflight: one request, no execution read.
	api.reset()
	api.runtimeID = "11111111-2222-4333-8444-555555555555"
	_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	wantErr(t, te, CodeInstanceMismatch, "different running app")
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests after a failed preflight", n)
	}

	// Replaced after the preflight: the execution reply lacks identity; its content is dropped.
	swapped := newFakeAPI()
	swapped.override = func(r *Request) (any, error, bool) {
		if strings.HasPrefix(r.Path, "/api/executions/") {
			return decodeJSONText(`{"id":7,"note":"private content"}`), nil, true
		}
		return nil, nil, false
	}
	_, te = callTool(t, swapped, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	wantErr(t, te, CodeIdentityUnavailable, "")
	if strings.Contains(mustJSON(t, te), "private content") {
		t.Error("discarded content leaked into the error")
	}
}

func TestSearchCorpus(t *testing.T) {
	api := newFakeAPI()
	for _, off := range []any{25, "3", true, -1} {
		_, te := callTool(t, api, "search_corpus", map[string]any{"query": "x", "offset": off})
		wantErr(t, te, CodeInvalidArgument, "cursor")
	}
	if len(api.requests()) != 0 {
		t.Fatal("refused offset still made a request")
	}
	_, te := callTool(t, api, "search_corpus", map[string]any{"query": "x", "mode": "Fuzzy"})
	wantErr(t, te, CodeInvalidArgument, "Unknown mode 'fuzzy'. Use 'keyword' or 'semantic'.")
	_, te = callTool(t, api, "search_corpus", map[string]any{"query": ""})
	wantErr(t, te, CodeInvalidArgument, "'query' is required.")

	out, te := callTool(t, api, "search_corpus", map[string]any{"query": "graphs", "offset": 0, "limit": 10000,
		"cursor": "2026-02-20|8", "sources": []any{"arxiv"}, "date_from": "2026"})
	wantNoErr(t, te)
	body := valMap(api.requests()[0].Body)
	want := map[string]any{"query": "graphs", "limit": 100, "sort": "newest", "cursor": "2026-02-20|8",
		"sources": []string{"arxiv"}, "date_from": "2026"}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %#v\nwant %#v", body, want)
	}
	o := valMap(out)
	if o["mode"] != "keyword" || o["next_cursor"] != "2026-02-20|8" || o["has_more"] != true || o["count"] != 1 {
		t.Errorf("keyword answer = %v", o)
	}
	paper := valMap(valList(o["papers"])[0])
	if paper["date"] != "2026-02-20" || paper["source"] != "semantic_scholar" || paper["abstract"] != nil || paper["distance"] != nil {
		t.Errorf("compact paper = %v", paper)
	}

	out, te = callTool(t, api, "search_corpus", map[string]any{"query": "graphs", "mode": "semantic"})
	wantNoErr(t, te)
	o = valMap(out)
	if o["mode"] != "semantic" || o["model"] != "mini" || o["ranked_count"] == nil || valMap(valList(o["papers"])[0])["distance"] == nil {
		t.Errorf("semantic answer = %v", o)
	}

	declined := newFakeAPI()
	declined.override = func(r *Request) (any, error, bool) {
		return decodeJSONText(`{"results":[],"next_cursor":null,"has_more":false,"total":0,"total_is_capped":false,"sort":"newest",
"similarity_unavailable":"No embedding model is configured."}`), nil, true
	}
	out, _ = callTool(t, declined, "search_corpus", map[string]any{"query": "graphs", "mode": "semantic"})
	if o := valMap(out); o["mode"] != "keyword" || o["mode_unavailable"] != "No embedding model is configured." {
		t.Errorf("declined semantic = %v", o)
	}
}

func TestFindSimilarAndPassthroughs(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "find_similar", map[string]any{"doc_id": 1, "limit": 7})
	wantNoErr(t, te)
	if got := paths(api.requests()); got[0] != "GET /api/documents/1/similar?k=7" {
		t.Errorf("request = %v", got)
	}
	o := valMap(out)
	if o["count"] != 1 || valMap(valList(o["papers"])[0])["distance"] == nil || o["model"] != "mini" {
		t.Errorf("answer = %v", o)
	}
	for tool, path := range map[string]string{
		"explain_match": "/api/documents/5/why", "get_paper_lifecycle": "/api/documents/5/lifecycle",
		"get_search_record": "/api/executions/5/search-record",
	} {
		api.reset()
		key := "doc_id"
		if tool == "get_search_record" {
			key = "exec_id"
		}
		out, te := callTool(t, api, tool, map[string]any{key: 5})
		wantNoErr(t, te)
		if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET " + path}) {
			t.Errorf("%s: %v", tool, got)
		}
		if out == nil {
			t.Errorf("%s: body not passed through", tool)
		}
		_, te = callTool(t, api, tool, map[string]any{})
		wantErr(t, te, CodeInvalidArgument, "'"+key+"' is required.")
	}
	// The caveats travel untouched.
	out, _ = callTool(t, api, "explain_match", map[string]any{"doc_id": 1})
	if valList(valMap(out)["what_resmon_cannot_see"]) == nil {
		t.Error("explain_match dropped what_resmon_cannot_see")
	}
}

func TestListSources(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_sources", nil)
	wantNoErr(t, te)
	text := mustJSON(t, out)
	if strings.Contains(text, "sk-must-not-appear") {
		t.Fatal("a credential value reached the answer")
	}
	o := valMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Errorf("count/total = %v/%v", o["count"], o["total"])
	}
	core := valMap(valList(o["sources"])[1])
	if core["credential_alias"] != "core_api_key" || core["credential_status"] != "present" || core["key_required"] != true || core["attribution"] != nil {
		t.Errorf("core = %v", core)
	}
	arxiv := valMap(valList(o["sources"])[0])
	if arxiv["credential_alias"] != nil || arxiv["credential_status"] != nil || arxiv["coverage"] != "Physics" {
		t.Errorf("arxiv = %v", arxiv)
	}
	paged, _ := callTool(t, api, "list_sources", map[string]any{"limit": 1, "offset": 1})
	if p := valMap(paged); p["count"] != 1 || p["total"] != 2 || valMap(valList(p["sources"])[0])["slug"] != "core" {
		t.Errorf("paged = %v", p)
	}

	broken := newFakeAPI()
	broken.override = func(r *Request) (any, error, bool) {
		if r.Path == "/api/credentials" {
			return nil, NewError(CodeUpstreamError, "resmon reported an internal error.", nil), true
		}
		return nil, nil, false
	}
	out, te = callTool(t, broken, "list_sources", nil)
	wantNoErr(t, te)
	if s := valMap(valList(valMap(out)["sources"])[1]); s["credential_status"] != nil {
		t.Errorf("status with no credentials answer = %v", s["credential_status"])
	}
	broken.override = func(r *Request) (any, error, bool) {
		return nil, NewError(CodeUpstreamError, "catalog broke", nil), true
	}
	_, te = callTool(t, broken, "list_sources", nil)
	wantErr(t, te, CodeUpstreamError, "catalog broke")
}

func TestListRoutines(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_routines", nil)
	wantNoErr(t, te)
	o := valMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Fatalf("answer = %v", o)
	}
	first := valMap(valList(o["routines"])[0])
	if first["active"] != true || first["schedule"] != "0 7 * * 1" || valMap(first["missed_fires"])["count"] == nil {
		t.Errorf("first = %v", first)
	}
	if !reflect.DeepEqual(first["sources"], []any{"arxiv"}) || !reflect.DeepEqual(first["keywords"], []any{"diffusion turbulence"}) {
		t.Errorf("terms = %v %v", first["sources"], first["keywords"])
	}
	second := valMap(valList(o["routines"])[1])
	if second["active"] != false || !reflect.DeepEqual(second["keywords"], []any{"a", "b"}) || second["last_run"] != "2026-09-01 08:00:00" {
		t.Errorf("second = %v", second)
	}
	out, _ = callTool(t, api, "list_routines", map[string]any{"active_only": true})
	if o := valMap(out); o["total"] != 1 {
		t.Errorf("active_only = %v", o)
	}
	out, _ = callTool(t, api, "list_routines", map[string]any{"limit": 1, "offset": 1})
	if o := valMap(out); o["count"] != 1 || o["total"] != 2 || valMap(valList(o["routines"])[0])["name"] != "Idle" {
		t.Errorf("paged = %v", o)
	}
	_, te = callTool(t, api, "list_routines", map[string]any{"active_only": "perhaps"})
	wantErr(t, te, CodeInvalidArgument, "true or false")
}

func TestGetRoutine(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "get_routine", map[string]any{})
	wantErr(t, te, CodeInvalidArgument, "routine_id")
	out, te := callTool(t, api, "get_routine", map[string]any{"routine_id": 1})
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/routines/1", "GET /api/routines/1/coverage", "GET /api/routines/1/deliveries"}) {
		t.Errorf("requests = %v", got)
	}
	r := valMap(out)
	cov := valMap(r["coverage"])
	if fmt.Sprint(cov["off_target_count"]) != "312" || fmt.Sprint(cov["missed_in_corpus_count"]) != "63" || cov["missed_in_corpus_count_is_lower_bound"] != true {
		t.Errorf("coverage = %v", cov)
	}
	if _, ok := cov["off_target"]; ok {
		t.Error("coverage lists must not be returned")
	}
	if r["missed_fires"] == nil || r["missed_fire_details"] == nil {
		t.Error("missed fires dropped")
	}
	d := valMap(r["delivery"])
	wantKeys := []string{"awaiting_review", "enabled_target_count", "last_attempts", "last_channel", "last_delivered_at_utc", "last_error", "last_state", "targets_by_channel"}
	if got := sortedKeys(d); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("delivery keys = %v", got)
	}
	if fmt.Sprint(valMap(d["targets_by_channel"])["webhook"]) != "2" || fmt.Sprint(d["enabled_target_count"]) != "3" || d["last_state"] != "failed" {
		t.Errorf("delivery = %v", d)
	}
	text := mustJSON(t, out)
	for _, leak := range []string{"jane@example.org", "/home/jane", "hooks.example.org", "target_snapshot"} {
		if strings.Contains(text, leak) {
			t.Errorf("get_routine leaked %q", leak)
		}
	}

	never := newFakeAPI()
	never.override = func(r *Request) (any, error, bool) {
		if strings.HasSuffix(r.Path, "/deliveries") {
			return decodeJSONText(`{"routine_id":1,"deliveries":[],"summary":{"targets":{},"enabled_target_count":0,"awaiting_review":0,"last":null}}`), nil, true
		}
		return nil, nil, false
	}
	out, _ = callTool(t, never, "get_routine", map[string]any{"routine_id": 1})
	d = valMap(valMap(out)["delivery"])
	for _, k := range []string{"last_state", "last_channel", "last_attempts", "last_error", "last_delivered_at_utc"} {
		if v, ok := d[k]; !ok || v != nil {
			t.Errorf("never delivered: %s = %v (present %v)", k, v, ok)
		}
	}

	for _, missing := range []*ToolError{NewError(CodeNotFound, "Not Found", nil), NewError(CodeInternalError, "Method Not Allowed", nil)} {
		old := newFakeAPI()
		old.override = func(r *Request) (any, error, bool) {
			if strings.HasSuffix(r.Path, "/deliveries") || strings.HasSuffix(r.Path, "/coverage") {
				return nil, missing, true
			}
			return nil, nil, false
		}
		out, te = callTool(t, old, "get_routine", map[string]any{"routine_id": 1})
		wantNoErr(t, te)
		if _, ok := valMap(out)["delivery"]; ok {
			t.Errorf("%s: delivery key present for a backend without the route", missing.Message)
		}
		if _, ok := valMap(out)["coverage"]; ok {
			t.Errorf("coverage present although the coverage call failed")
		}
	}

	failing := newFakeAPI()
	failing.override = func(r *Request) (any, error, bool) {
		if strings.HasSuffix(r.Path, "/deliveries") {
			return nil, NewError(CodeUpstreamError, "resmon reported an internal error.", nil), true
		}
		return nil, nil, false
	}
	_, te = callTool(t, failing, "get_routine", map[string]any{"routine_id": 1})
	wantErr(t, te, CodeUpstreamError, "internal error")

	gone := newFakeAPI()
	gone.override = func(r *Request) (any, error, bool) {
		return nil, NewError(CodeNotFound, "Routine not found", nil), true
	}
	_, te = callTool(t, gone, "get_routine", map[string]any{"routine_id": 99})
	wantErr(t, te, CodeNotFound, "Routine not found")
}

func TestListExecutions(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_executions", nil)
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions?limit=500"}) {
		t.Errorf("requests = %v", got)
	}
	o := valMap(out)
	if o["count"] != 25 || o["total"] != 30 || o["total_is_capped"] != false {
		t.Errorf("default page = %v/%v", o["count"], o["total"])
	}
	row := valMap(valList(o["executions"])[0])
	for _, k := range []string{"id", "type", "status", "started", "finished", "result_count", "interrupted_reason", "restarted_from"} {
		if _, ok := row[k]; !ok {
			t.Errorf("projection lacks %s", k)
		}
	}
	if _, ok := row["coverage"]; ok {
		t.Error("projection carries coverage")
	}
	out, _ = callTool(t, api, "list_executions", map[string]any{"routine_id": "4", "status": "interrupted", "limit": 2, "offset": 1})
	o = valMap(out)
	// ids 30..1: routine 4 on even ids, interrupted on multiples of 3 → 30, 24, 18, 12, 6.
	if o["total"] != 5 || o["count"] != 2 || fmt.Sprint(valMap(valList(o["executions"])[0])["id"]) != "24" {
		t.Errorf("filtered = %v", o)
	}
	_, te = callTool(t, api, "list_executions", map[string]any{"routine_id": "four"})
	wantErr(t, te, CodeInvalidArgument, "'routine_id' must be a whole number.")

	big := newFakeAPI()
	big.override = func(r *Request) (any, error, bool) {
		rows := make([]any, 500)
		for i := range rows {
			rows[i] = map[string]any{"id": json.Number(fmt.Sprint(500 - i)), "status": "completed"}
		}
		return rows, nil, true
	}
	out, _ = callTool(t, big, "list_executions", map[string]any{"limit": 10000})
	if o := valMap(out); o["count"] != 100 || o["total"] != 500 || o["total_is_capped"] != true {
		t.Errorf("capped = %v/%v/%v", o["count"], o["total"], o["total_is_capped"])
	}
}

func TestGetExecutionResults(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "get_execution_results", map[string]any{"exec_id": 3})
	wantNoErr(t, te)
	r := api.requests()[0]
	if r.Path != "/api/executions/3/references" || r.Query.Get("format") != "json" || r.Query.Get("include_ids") != "true" {
		t.Errorf("request = %+v", r)
	}
	o := valMap(out)
	if o["count"] != 25 || o["total"] != 60 {
		t.Errorf("page = %v/%v", o["count"], o["total"])
	}
	if fmt.Sprint(valMap(valList(o["papers"])[0])["id"]) != "1" {
		t.Errorf("paper ids not kept: %v", valList(o["papers"])[0])
	}
	out, _ = callTool(t, api, "get_execution_results", map[string]any{"exec_id": 3, "offset": 50, "limit": 25})
	if o := valMap(out); o["count"] != 10 || fmt.Sprint(valMap(valList(o["papers"])[0])["id"]) != "51" {
		t.Errorf("last page = %v", o)
	}
	for _, r := range api.requests() {
		if strings.HasSuffix(r.Path, "/report") {
			t.Error("the full report was requested")
		}
	}
	garbled := newFakeAPI()
	garbled.override = func(*Request) (any, error, bool) { return "[{not json", nil, true }
	_, te = callTool(t, garbled, "get_execution_results", map[string]any{"exec_id": 3})
	wantErr(t, te, CodeUpstreamError, "could not be read")
	refused := newFakeAPI()
	refused.override = func(*Request) (any, error, bool) {
		return nil, NewError(CodeInvalidArgument, "Unknown export format 'json'. Expected one of: bibtex, csv, ris.", nil), true
	}
	_, te = callTool(t, refused, "get_execution_results", map[string]any{"exec_id": 3})
	wantErr(t, te, CodeInvalidArgument, "Unknown export format")
}

func TestAnalyticsWatchdogExport(t *testing.T) {
	api := newFakeAPI()
	for view, path := range analyticsPaths {
		api.reset()
		out, te := callTool(t, api, "get_analytics", map[string]any{"view": view})
		wantNoErr(t, te)
		if valMap(out)["served"] != path || len(api.requests()) != 1 || api.requests()[0].Query != nil {
			t.Errorf("%s → %v", view, paths(api.requests()))
		}
	}
	api.reset()
	_, te := callTool(t, api, "get_analytics", map[string]any{"view": "volume", "window": "90d"})
	wantNoErr(t, te)
	if got := paths(api.requests()); got[0] != "GET /api/analytics/publication-volume?window=90d" {
		t.Errorf("window = %v", got)
	}
	_, te = callTool(t, api, "get_analytics", map[string]any{"view": "weather"})
	wantErr(t, te, CodeInvalidArgument, "Unknown view 'weather'. Expected one of: discovery-lag, keywords, overview, routine-health, sources, volume.")

	api.reset()
	callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": "true"})
	callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": false})
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/watchdog?include_muted=true", "GET /api/watchdog"}) {
		t.Errorf("watchdog = %v", got)
	}

	api.reset()
	out, te := callTool(t, api, "export_references", map[string]any{"exec_id": 9, "doc_ids": []any{1}})
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions/9/references?format=bibtex"}) {
		t.Errorf("exec export = %v", got)
	}
	if s, ok := out.(string); !ok || !strings.HasPrefix(s, "@misc") {
		t.Errorf("export text = %#v", out)
	}
	api.reset()
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{json.Number("3"), "4"}, "format": "ris"})
	wantNoErr(t, te)
	r := api.requests()[0]
	if r.Method != http.MethodPost || r.Path != "/api/export/references" ||
		!reflect.DeepEqual(r.Body, map[string]any{"document_ids": []int64{3, 4}, "format": "ris"}) {
		t.Errorf("doc export = %+v", r)
	}
	for _, args := range []map[string]any{{}, {"doc_ids": []any{}}, {"exec_id": nil}} {
		_, te = callTool(t, api, "export_references", args)
		wantErr(t, te, CodeInvalidArgument, "Pass either 'exec_id' or 'doc_ids'.")
	}
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{"x"}})
	wantErr(t, te, CodeInvalidArgument, "doc_ids")
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": "1,2"})
	wantErr(t, te, CodeInvalidArgument, "doc_ids")
}

func TestProfiles(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_watch_profiles", map[string]any{"kind": " person "})
	wantNoErr(t, te)
	if got := paths(api.requests()); got[0] != "GET /api/profiles?kind=person" {
		t.Errorf("request = %v", got)
	}
	o := valMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Errorf("answer = %v", o)
	}
	ada := valMap(valList(o["profiles"])[0])
	if !reflect.DeepEqual(ada["names"], []any{"Ada Lovelace", "A. Lovelace"}) || !reflect.DeepEqual(ada["identifiers"], []string{"openalex", "orcid"}) ||
		ada["orcid"] != "0000-0002-1825-0097" {
		t.Errorf("summary = %v", ada)
	}
	b := valMap(valList(o["profiles"])[1])
	if _, ok := b["basis_warning"]; !ok || b["basis_warning"] != "name only" || !reflect.DeepEqual(b["affiliations"], []any{}) {
		t.Errorf("second = %v", b)
	}

	api.reset()
	out, te = callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 1})
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/profiles/1", "GET /api/profiles/1/matches?limit=1"}) {
		t.Errorf("requests = %v", got)
	}
	if m := valMap(valMap(out)["matches"]); fmt.Sprint(m["total"]) != "9" || m["by_basis"] == nil {
		t.Errorf("matches = %v", m)
	}

	api.reset()
	out, te = callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 1, "limit": 5, "offset": 10})
	wantNoErr(t, te)
	if got := paths(api.requests()); got[0] != "GET /api/profiles/1/matches?limit=5&offset=10" {
		t.Errorf("request = %v", got)
	}
	o = valMap(out)
	row := valMap(valList(o["matches"])[0])
	if row["basis"] != "name_only" || row["matched_author"] != "A. Lovelace" || valMap(row["evidence"])["author"] != "A. Lovelace" || fmt.Sprint(row["doc_id"]) != "5" {
		t.Errorf("row = %v", row)
	}
	checkGlossary(t, o)

	empty := newFakeAPI()
	empty.override = func(*Request) (any, error, bool) {
		return decodeJSONText(`{"matches":[],"total":0,"by_basis":{}}`), nil, true
	}
	out, _ = callTool(t, empty, "get_profile_matches", map[string]any{"profile_id": 1})
	checkGlossary(t, valMap(out))
}

func checkGlossary(t *testing.T, o map[string]any) {
	t.Helper()
	g := valMap(o["what_a_basis_means"])
	if got := sortedKeys(g); !reflect.DeepEqual(got, []string{"identifier", "name+affiliation", "name_only"}) {
		t.Errorf("glossary keys = %v", got)
	}
}

func TestRunSweep(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "run_sweep", map[string]any{"query": "x"})
	wantErr(t, te, CodeInvalidArgument, "'sources' is required.")
	_, te = callTool(t, api, "run_sweep", map[string]any{"sources": []any{"arxiv"}})
	wantErr(t, te, CodeInvalidArgument, "'query' is required.")
	_, te = callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": []any{"arxiv"}, "ai_enabled": "sure"})
	wantErr(t, te, CodeInvalidArgument, "'ai_enabled' requires true or false.")
	if len(api.requests()) != 0 {
		t.Fatal("refused call made a request")
	}
	out, te := callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": []any{"arxiv", "openalex"}, "ai_enabled": "false", "date_to": "2026"})
	wantNoErr(t, te)
	r := api.requests()[0]
	want := map[string]any{"query": "x", "repositories": []string{"arxiv", "openalex"}, "max_results": int64(50), "ai_enabled": false, "date_to": "2026"}
	if !r.Write || !reflect.DeepEqual(r.Body, want) {
		t.Errorf("request = %+v", r)
	}
	if o := valMap(out); fmt.Sprint(o["execution_id"]) != "42" || !strings.Contains(o["detail"].(string), "get_execution") {
		t.Errorf("answer = %v", o)
	}
	api.reset()
	callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": "arxiv", "max_results": "10"})
	if b := valMap(api.requests()[0].Body); !reflect.DeepEqual(b["repositories"], []string{"arxiv"}) || b["max_results"] != int64(10) {
		t.Errorf("body = %v", b)
	}
}

func TestCreateRoutine(t *testing.T) {
	api := newFakeAPI()
	for _, k := range []string{"name", "keywords", "sources", "schedule"} {
		args := map[string]any{}
		for kk, v := range toolArgs["create_routine"] {
			if kk != k {
				args[kk] = v
			}
		}
		_, te := callTool(t, api, "create_routine", args)
		wantErr(t, te, CodeInvalidArgument, "'"+k+"' is required.")
	}
	out, te := callTool(t, api, "create_routine", toolArgs["create_routine"])
	wantNoErr(t, te)
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"POST /api/routines", "GET /api/routines/7"}) {
		t.Errorf("requests = %v", got)
	}
	body := valMap(api.requests()[0].Body)
	if body["is_active"] != false || body["ai_enabled"] != false || body["schedule_cron"] != "0 7 * * 1" {
		t.Errorf("body = %v", body)
	}
	if _, ok := body["intent"]; ok {
		t.Error("intent sent although not given")
	}
	params := valMap(body["parameters"])
	if params["query"] != "quantum error" || !reflect.DeepEqual(params["repositories"], []string{"arxiv"}) {
		t.Errorf("parameters = %v", params)
	}
	o := valMap(out)
	if valMap(o["routine"])["is_active"] != false || !strings.Contains(o["detail"].(string), "Activate it") {
		t.Errorf("answer = %v", o)
	}

	warned := newFakeAPI()
	warned.override = func(r *Request) (any, error, bool) {
		if r.Method == http.MethodPost {
			return decodeJSONText(`{"id":7,"name":"W","entity_warning":"None of these sources can be asked about an author."}`), nil, true
		}
		return nil, nil, false
	}
	args := map[string]any{"intent": "  new closures  ", "entity": map[string]any{"profile_id": 1, "mode": "new_papers"}}
	for k, v := range toolArgs["create_routine"] {
		args[k] = v
	}
	out, te = callTool(t, warned, "create_routine", args)
	wantNoErr(t, te)
	body = valMap(warned.requests()[0].Body)
	if body["intent"] != "new closures" || valMap(valMap(body["parameters"])["entity"])["mode"] != "new_papers" {
		t.Errorf("body = %v", body)
	}
	o = valMap(out)
	if o["entity_warning"] == nil || !strings.HasSuffix(o["detail"].(string), "asked about an author.") {
		t.Errorf("warning not lifted: %v", o)
	}
	rejected := newFakeAPI()
	rejected.override = func(r *Request) (any, error, bool) {
		return nil, NewError(CodeInvalidArgument, "That profile does not exist.", nil), true
	}
	_, te = callTool(t, rejected, "create_routine", args)
	wantErr(t, te, CodeInvalidArgument, "profile does not exist")
}

func TestCreateWatchProfile(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "create_watch_profile", map[string]any{})
	wantErr(t, te, CodeInvalidArgument, "'name' is required.")
	out, te := callTool(t, api, "create_watch_profile", map[string]any{"name": "Ada", "aliases": []any{"A. L."}, "affiliations": []any{"AEG"}})
	wantNoErr(t, te)
	body := valMap(api.requests()[0].Body)
	want := map[string]any{"kind": "person", "display_name": "Ada",
		"names":       []any{map[string]any{"value": "Ada"}, map[string]any{"value": "A. L."}},
		"identifiers": map[string]any{}, "affiliations": []string{"AEG"}, "field_hints": []string{}}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %#v", body)
	}
	o := valMap(out)
	if o["basis_warning"] == nil || !strings.HasPrefix(o["detail"].(string), "Created. This profile has neither") {
		t.Errorf("warning not lifted: %v", o)
	}
	api.reset()
	out, _ = callTool(t, api, "create_watch_profile", map[string]any{"name": "Ada", "orcid": " 0000-0002-1825-0097 "})
	ids := valMap(valMap(api.requests()[0].Body)["identifiers"])
	if o := valMap(ids["orcid"]); o["value"] != "0000-0002-1825-0097" || o["cited"] != "entered through an MCP client" {
		t.Errorf("orcid = %v", ids)
	}
	if o := valMap(out); o["basis_warning"] != nil || !strings.Contains(o["detail"].(string), "by identity") {
		t.Errorf("answer = %v", o)
	}
}

func TestRunRoutineAndToggles(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "run_routine", map[string]any{"routine_id": 7})
	wantNoErr(t, te)
	if o := valMap(out); fmt.Sprint(o["execution_id"]) != "43" || o["was_inactive"] != true {
		t.Errorf("answer = %v", o)
	}
	if r := api.requests()[0]; r.Method != http.MethodPost || r.Path != "/api/routines/7/run" || r.Body != nil || !r.Write {
		t.Errorf("request = %+v", r)
	}
	sentence := "This routine is already running as execution 12. Wait for that run to finish, or cancel it, before starting another."
	cases := []struct {
		name   string
		err    *ToolError
		wantID any
	}{
		{"headers", NewError(CodeConflict, sentence, map[string]any{"conflict": "routine_already_running", "execution_id": int64(12)}), int64(12)},
		{"sentence only", NewError(CodeConflict, sentence, nil), int64(12)},
		{"no id anywhere", NewError(CodeConflict, "This routine is already running. Wait for that run to finish, or cancel it, before starting another.",
			map[string]any{"conflict": "routine_already_running", "execution_id": nil}), nil},
	}
	for _, c := range cases {
		busy := newFakeAPI()
		busy.override = func(*Request) (any, error, bool) { return nil, c.err, true }
		_, te := callTool(t, busy, "run_routine", map[string]any{"routine_id": 7})
		wantErr(t, te, CodeConflict, "already running")
		if te.Message != c.err.Message {
			t.Errorf("%s: message changed to %q", c.name, te.Message)
		}
		want := map[string]any{"conflict": "routine_already_running", "execution_id": c.wantID}
		if !reflect.DeepEqual(te.Detail, want) {
			t.Errorf("%s: detail = %#v", c.name, te.Detail)
		}
		wire := mustJSON(t, te)
		if c.wantID != nil && !strings.Contains(wire, `"execution_id":12`) {
			t.Errorf("%s: wire = %s", c.name, wire)
		}
	}
	admission := NewError(CodeConflict, "resmon is already running as many executions as it allows at once. Wait for one to finish and try again.", nil)
	full := newFakeAPI()
	full.override = func(*Request) (any, error, bool) { return nil, admission, true }
	_, te = callTool(t, full, "run_routine", map[string]any{"routine_id": 7})
	if te != admission {
		t.Errorf("admission conflict reshaped: %v", te)
	}

	for _, action := range []string{"activate", "deactivate"} {
		api.reset()
		out, te := callTool(t, api, action+"_routine", map[string]any{"routine_id": "4"})
		wantNoErr(t, te)
		r := api.requests()
		if len(r) != 1 || r[0].Method != http.MethodPost || r[0].Path != "/api/routines/4/"+action || r[0].Body != nil || r[0].Query != nil || !r[0].Write {
			t.Errorf("%s: %+v", action, r)
		}
		if valMap(out)["is_active"] != (action == "activate") {
			t.Errorf("%s: not passed through: %v", action, out)
		}
		_, te = callTool(t, api, action+"_routine", map[string]any{"routine_id": true})
		wantErr(t, te, CodeInvalidArgument, "whole number")
	}
}

func TestUpdateSettings(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "update_settings", map[string]any{"group": " ai ", "settings": map[string]any{"ai_effort": "low"}})
	wantNoErr(t, te)
	reqs := api.requests()
	if got := paths(reqs); !reflect.DeepEqual(got, []string{"GET /api/settings/ai", "PUT /api/settings/ai", "GET /api/settings/ai"}) {
		t.Fatalf("requests = %v", got)
	}
	if !reflect.DeepEqual(reqs[1].Body, map[string]any{"settings": map[string]any{"ai_effort": "low"}}) || !reqs[1].Write {
		t.Errorf("PUT = %+v", reqs[1])
	}
	o := valMap(out)
	if !reflect.DeepEqual(o["changed"], map[string]any{"ai_effort": map[string]any{"from": "high", "to": "low"}}) ||
		o["unchanged_key_count"] != 4 || !reflect.DeepEqual(o["requested"], []string{"ai_effort"}) || o["group"] != "ai" {
		t.Errorf("answer = %v", o)
	}

	// Booleans: the notifications group holds a JSON boolean; every spelling arrives as one.
	for _, v := range []any{"false", "TRUE", false, true, " False "} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": v}})
		wantNoErr(t, te)
		reqs := api.requests()
		if len(reqs) != 3 || reqs[1].Method != http.MethodPut {
			t.Fatalf("%#v: requests = %v", v, paths(reqs))
		}
		sent := valMap(valMap(reqs[1].Body)["settings"])["notify_manual"]
		want, _ := parseFlag(v)
		if sent != want {
			t.Errorf("%#v sent as %#v", v, sent)
		}
		if got := api.settings["notifications"]["notify_manual"]; got != want {
			t.Errorf("%#v stored as %v", v, got)
		}
	}
	api = newFakeAPI()
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": "maybe", "notify_automatic_mode": "none"}})
	wantErr(t, te, CodeInvalidArgument, "'notify_manual' requires true or false.")
	if got := paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/settings/notifications"}) {
		t.Errorf("refused boolean still wrote: %v", got)
	}

	// String fields keep the renderer's "true"/"false" convention for a JSON boolean.
	api = newFakeAPI()
	out, _ = callTool(t, api, "update_settings", map[string]any{"group": "cloud", "settings": map[string]any{"cloud_auto_backup": true}})
	if sent := valMap(valMap(api.requests()[1].Body)["settings"])["cloud_auto_backup"]; sent != "true" {
		t.Errorf("string field sent %#v", sent)
	}
	if c := valMap(valMap(out)["changed"])["cloud_auto_backup"]; !reflect.DeepEqual(c, map[string]any{"from": "false", "to": "true"}) {
		t.Errorf("diff = %v", c)
	}

	// Credential-shaped names: refused with no request and without echoing the value.
	for _, key := range []string{"api_key", "ANTHROPIC_TOKEN", "smtp_password", "client_secret", "my_passphrase", "credential_store", "auth_header", "hotkey"} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{key: "sk-real-value", "ai_effort": "low"}})
		wantErr(t, te, CodeInvalidArgument, "looks like a credential")
		if !reflect.DeepEqual(te.Detail["refused_keys"], []string{key}) {
			t.Errorf("%s: refused_keys = %v", key, te.Detail["refused_keys"])
		}
		if strings.Contains(mustJSON(t, te), "sk-real-value") || len(api.requests()) != 0 {
			t.Errorf("%s: value echoed or request made", key)
		}
	}
	// Groups outside the allowlist: no request.
	for _, g := range []string{"credentials", "advanced", "execution", "", "AI"} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": g, "settings": map[string]any{"x": "1"}})
		if te == nil || te.Code != CodeInvalidArgument || len(api.requests()) != 0 {
			t.Errorf("group %q: %v, %d requests", g, te, len(api.requests()))
		}
		if g == "execution" && !strings.Contains(te.Message, "decision about the machine") {
			t.Errorf("execution refusal lacks its reason: %s", te.Message)
		}
		if g == "advanced" && te.Message != "'advanced' is not a settings group this tool can change. Allowed: ai, assistant, email, embeddings, cloud, storage, notifications." {
			t.Errorf("message = %s", te.Message)
		}
	}
	for _, s := range []any{nil, map[string]any{}, "ai_effort=low", []any{"x"}} {
		_, te := callTool(t, newFakeAPI(), "update_settings", map[string]any{"group": "ai", "settings": s})
		wantErr(t, te, CodeInvalidArgument, "'settings' must be a non-empty object.")
	}

	// Unknown keys: refused, not dropped; no PUT.
	api = newFakeAPI()
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_provder": "x", "ai_effort": "low"}})
	wantErr(t, te, CodeInvalidArgument, "The 'ai' group has no setting called 'ai_provder'.")
	if !reflect.DeepEqual(te.Detail["unknown_keys"], []string{"ai_provder"}) || !reflect.DeepEqual(te.Detail["group_keys"], sortedKeys(api.settings["ai"])) {
		t.Errorf("detail = %v", te.Detail)
	}
	if len(api.requests()) != 1 {
		t.Errorf("requests = %v", paths(api.requests()))
	}

	// A no-op.
	api = newFakeAPI()
	out, te = callTool(t, api, "update_settings", map[string]any{"group": "storage", "settings": map[string]any{"pdf_policy": "save"}})
	wantNoErr(t, te)
	if o := valMap(out); !reflect.DeepEqual(o["changed"], map[string]any{}) || !strings.Contains(o["detail"].(string), "Nothing changed") {
		t.Errorf("no-op = %v", o)
	}

	// Embeddings: the writable map is the nested one; capability is not a setting.
	api = newFakeAPI()
	out, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "nomic"}})
	wantNoErr(t, te)
	if c := valMap(valMap(out)["changed"]); len(c) != 1 || c["embedding_model"] == nil {
		t.Errorf("embeddings diff = %v", c)
	}
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"capability": "x"}})
	wantErr(t, te, CodeInvalidArgument, "no setting called 'capability'")
	flat := newFakeAPI()
	flat.override = func(r *Request) (any, error, bool) {
		return decodeJSONText(`{"anything":"x","id":1}`), nil, true
	}
	_, te = callTool(t, flat, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "n"}})
	wantErr(t, te, CodeInternalError, "resmon did not return embedding settings.")
	notObject := newFakeAPI()
	notObject.override = func(*Request) (any, error, bool) { return []any{}, nil, true }
	_, te = callTool(t, notObject, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "n"}})
	wantErr(t, te, CodeInternalError, "resmon did not return the 'ai' settings group.")
	_, te = callTool(t, newFakeAPI(), "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": []any{"x"}}})
	wantErr(t, te, CodeInvalidArgument, "'ai_effort' takes a text value.")
}
