package resmonsim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// toolPairs are the 46 method+path pairs the 25 tools of contract v2.3 call.
var toolPairs = func() [][2]string {
	p := [][2]string{
		{"GET", "/api/health"}, {"POST", "/api/explorer/search"}, {"GET", "/api/documents/{id}/similar"},
		{"GET", "/api/repositories/catalog"}, {"GET", "/api/credentials"}, {"GET", "/api/routines"},
		{"GET", "/api/routines/{id}"}, {"GET", "/api/routines/{id}/coverage"}, {"GET", "/api/routines/{id}/deliveries"},
		{"GET", "/api/executions"}, {"GET", "/api/executions/{id}"}, {"GET", "/api/executions/{id}/references"},
		{"GET", "/api/executions/{id}/search-record"}, {"GET", "/api/documents/{id}/why"}, {"GET", "/api/documents/{id}/lifecycle"},
		{"GET", "/api/analytics/overview"}, {"GET", "/api/analytics/publication-volume"}, {"GET", "/api/analytics/source-contribution"},
		{"GET", "/api/analytics/keyword-contribution"}, {"GET", "/api/analytics/routine-health"}, {"GET", "/api/analytics/discovery-lag"},
		{"GET", "/api/watchdog"}, {"GET", "/api/profiles"}, {"GET", "/api/profiles/{id}"}, {"GET", "/api/profiles/{id}/matches"},
		{"POST", "/api/export/references"}, {"POST", "/api/search/sweep"}, {"POST", "/api/routines"}, {"POST", "/api/profiles"},
		{"POST", "/api/routines/{id}/run"}, {"POST", "/api/routines/{id}/activate"}, {"POST", "/api/routines/{id}/deactivate"},
	}
	for _, g := range []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"} {
		p = append(p, [2]string{"GET", "/api/settings/" + g}, [2]string{"PUT", "/api/settings/" + g})
	}
	return p
}()

func TestResolve(t *testing.T) {
	if len(toolPairs) != 46 {
		t.Fatalf("tool pairs %d", len(toolPairs))
	}
	served := map[Route]bool{}
	for _, r := range Routes() {
		if served[r] {
			t.Errorf("duplicate route %v", r)
		}
		served[r] = true
		got, ok := Resolve(r.Method, strings.ReplaceAll(r.Pattern, "{id}", "42"))
		if !ok || got != r {
			t.Errorf("Resolve(%s %s) = %v, %v", r.Method, r.Pattern, got, ok)
		}
	}
	for _, p := range toolPairs {
		if !served[Route{p[0], p[1]}] {
			t.Errorf("tool route %s %s not served", p[0], p[1])
		}
	}
	for _, p := range []string{"GET /api/settings/execution", "PUT /api/settings/execution", "GET /api/executions/active"} {
		m, path, _ := strings.Cut(p, " ")
		if _, ok := Resolve(m, path); !ok {
			t.Errorf("%s not served", p)
		}
	}
	if r, _ := Resolve("GET", "/api/executions/active"); r.Pattern != "/api/executions/active" {
		t.Errorf("/api/executions/active resolved to %v", r)
	}
	for _, p := range []string{"GET /api/routines/abc", "GET /api/routines/-1", "GET /api/settings/advanced", "GET /api/settings/credentials",
		"DELETE /api/health", "GET /api/nope", "POST /api/routines/7", "GET /api/routines//run", "GET /api/health/x", "PUT /api/credentials/x"} {
		m, path, _ := strings.Cut(p, " ")
		if r, ok := Resolve(m, path); ok {
			t.Errorf("Resolve(%s) = %v, want no route", p, r)
		}
	}
	// Query strings are not part of the path.
	if _, ok := Resolve("GET", "/api/executions/3/references?format=json"); !ok {
		t.Errorf("query string broke Resolve")
	}
}

func TestIdentityChecks(t *testing.T) {
	s := startSim(t, Options{})
	id := s.RuntimeID()
	other := "3f0c6a0e-8a0b-4e53-9d0f-2c5b1a7e9d41"
	for _, bad := range []string{"", "bad", strings.ToUpper(id), "3f0c6a0e-8a0b-1e53-9d0f-2c5b1a7e9d41"} {
		r := do(t, s, "GET", "/api/health?expected_runtime_id="+bad, nil)
		wantStatus(t, r, 422)
		wantBody(t, r, `{"detail":"expected_runtime_id must be a canonical lowercase UUID4"}`)
	}
	mismatch := fmt.Sprintf(`{"detail":{"code":"instance_mismatch","message":"This request reached a different running app.","expected_runtime_id":"%s","actual_runtime_id":"%s"}}`, other, id)
	r := do(t, s, "GET", "/api/health?expected_runtime_id="+other, nil)
	wantStatus(t, r, 409)
	wantBody(t, r, mismatch)
	// The mismatch is decided before the database: it beats a 404.
	r = do(t, s, "GET", "/api/executions/999?expected_runtime_id="+other, nil)
	wantStatus(t, r, 409)
	wantBody(t, r, mismatch)
	r = do(t, s, "GET", "/api/executions/999?expected_runtime_id="+id, nil)
	wantStatus(t, r, 404)
	wantBody(t, r, `{"detail":"Execution not found"}`)
	e := do(t, s, "GET", "/api/executions/1?expected_runtime_id="+id, nil).json(t)
	ident := e["identity"].(map[string]any)
	if ident["runtime_id"] != id || ident["schema_version"] != float64(21) || ident["contract_version"] != float64(1) {
		t.Errorf("identity %v", ident)
	}
	// The list carries no identity.
	for _, it := range do(t, s, "GET", "/api/executions", nil).list(t) {
		if _, ok := it.(map[string]any)["identity"]; ok {
			t.Fatalf("list element carries identity")
		}
	}
	h := do(t, s, "GET", "/api/health?expected_runtime_id="+id, nil)
	if !strings.HasPrefix(string(h.body), `{"status":"ok","identity":{"contract_version":1,"runtime_id":"`+id+`"`) {
		t.Errorf("health body not compact/ordered: %s", h.body)
	}

	n := startSim(t, Options{NoIdentity: true})
	body := do(t, n, "GET", "/api/executions/1", nil).json(t)
	if _, ok := body["identity"]; ok {
		t.Errorf("NoIdentity execution carries identity")
	}
}

func TestRoutineShapes(t *testing.T) {
	s := startSim(t, Options{RunDuration: time.Hour})
	list := do(t, s, "GET", "/api/routines", nil).list(t)
	if len(list) != 3 {
		t.Fatalf("%d routines", len(list))
	}
	first := list[0].(map[string]any)
	if first["id"] != float64(3) {
		t.Errorf("routines not newest first: %v", first["id"])
	}
	for _, it := range list {
		r := it.(map[string]any)
		if _, isNum := r["is_active"].(float64); !isNum {
			t.Errorf("list is_active %T, want an integer", r["is_active"])
		}
		if _, isStr := r["parameters"].(string); !isStr {
			t.Errorf("list parameters %T", r["parameters"])
		}
		for _, k := range []string{"last_execution", "last_status", "missed_fires"} {
			if _, ok := r[k]; !ok {
				t.Errorf("list element lacks %s", k)
			}
		}
	}
	d := do(t, s, "GET", "/api/routines/1", nil).json(t)
	if d["is_active"] != true || d["email_enabled"] != false {
		t.Errorf("detail flags %v %v", d["is_active"], d["email_enabled"])
	}
	if _, ok := d["last_status"]; ok {
		t.Errorf("detail has last_status")
	}
	if mf := d["missed_fires"].(map[string]any); mf["count"] != float64(2) || len(d["missed_fire_details"].([]any)) != 2 {
		t.Errorf("missed fires %v", mf)
	}
	wantBody(t, do(t, s, "GET", "/api/routines/99", nil), `{"detail":"Routine not found"}`)

	// create: parameters must be an object; the response is 201 {id,name}.
	r := do(t, s, "POST", "/api/routines", map[string]any{"name": "x", "schedule_cron": "0 7 * * *", "parameters": `{"query":"x"}`})
	wantStatus(t, r, 422)
	if !strings.Contains(string(r.body), `"type":"dict_type","loc":["body","parameters"]`) {
		t.Errorf("create with string parameters: %s", r.body)
	}
	r = do(t, s, "POST", "/api/routines", map[string]any{"name": "Quantum EC weekly", "schedule_cron": "0 7 * * 1",
		"parameters": map[string]any{"query": "quantum", "repositories": []string{"arxiv"}}, "is_active": false, "intent": "  "})
	wantStatus(t, r, 201)
	wantBody(t, r, `{"id":4,"name":"Quantum EC weekly"}`)
	created, ok := s.Routine(4)
	if !ok || created["is_active"] != false || created["intent"] != nil || created["parameters"] != `{"query": "quantum", "repositories": ["arxiv"]}` {
		t.Errorf("created routine %v", created)
	}
	r = do(t, s, "POST", "/api/routines", map[string]any{"name": "e", "schedule_cron": "0 7 * * 1",
		"parameters": map[string]any{"repositories": []string{"zenodo"}, "entity": map[string]any{"mode": "retractions", "profile_id": 1}}})
	wantStatus(t, r, 201)
	if b := r.json(t); b["entity_warning"] == nil || b["entity"] == nil {
		t.Errorf("entity routine on an author-blind source: %s", r.body)
	}
	wantStatus(t, do(t, s, "POST", "/api/routines", map[string]any{"name": "e", "schedule_cron": "0 7 * * 1",
		"parameters": map[string]any{"entity": map[string]any{"mode": "everything", "profile_id": 1}}}), 400)

	// activate / deactivate are idempotent and answer JSON booleans.
	wantBody(t, do(t, s, "POST", "/api/routines/4/activate", nil), `{"id":4,"is_active":true}`)
	wantBody(t, do(t, s, "POST", "/api/routines/4/activate", nil), `{"id":4,"is_active":true}`)
	if r, _ := s.Routine(4); r["is_active"] != true {
		t.Errorf("activate did not stick")
	}
	wantBody(t, do(t, s, "POST", "/api/routines/4/deactivate", nil), `{"id":4,"is_active":false}`)

	// run: an inactive routine runs and says so; a second run conflicts.
	run := do(t, s, "POST", "/api/routines/2/run", nil)
	wantStatus(t, run, 200)
	rb := run.json(t)
	if rb["was_inactive"] != true || rb["detail"] != "This routine is not scheduled; it was run once because you asked for it." {
		t.Errorf("run inactive %s", run.body)
	}
	execID := int(rb["execution_id"].(float64))
	conflict := do(t, s, "POST", "/api/routines/2/run", nil)
	wantStatus(t, conflict, 409)
	wantBody(t, conflict, fmt.Sprintf(`{"detail":"This routine is already running as execution %d. Wait for that run to finish, or cancel it, before starting another."}`, execID))
	if conflict.header.Get("X-Resmon-Conflict") != "routine_already_running" || conflict.header.Get("X-Resmon-Execution-Id") != fmt.Sprint(execID) {
		t.Errorf("conflict headers %v", conflict.header)
	}
	e, _ := s.Execution(execID)
	if e["execution_type"] != "automated_sweep" || e["routine_id"] != float64(2) || e["status"] != "running" {
		t.Errorf("routine run execution %v", e)
	}
	// Running routine 1 marks its recorded missed fires ran_late.
	rb = do(t, s, "POST", "/api/routines/1/run", nil).json(t)
	if rb["missed_fires_marked_ran_late"] != float64(2) || rb["detail"] != "Running now, in addition to its schedule." {
		t.Errorf("run active %v", rb)
	}
	if r, _ := s.Routine(1); r["missed_fires"].(map[string]any)["count"] != float64(0) {
		t.Errorf("missed fires not marked")
	}
	wantBody(t, do(t, s, "POST", "/api/routines/abc/run", nil),
		`{"detail":[{"type":"int_parsing","loc":["path","routine_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`)
}

func TestExecutionShapes(t *testing.T) {
	s := startSim(t, Options{})
	list := do(t, s, "GET", "/api/executions", nil).list(t)
	if len(list) != 8 {
		t.Fatalf("%d executions", len(list))
	}
	prev := "~"
	statuses := map[string]bool{}
	for _, it := range list {
		e := it.(map[string]any)
		if st := e["start_time"].(string); st > prev {
			t.Errorf("not start_time DESC")
		} else {
			prev = st
		}
		statuses[e["status"].(string)] = true
		if _, isStr := e["parameters"].(string); !isStr {
			t.Errorf("parameters %T", e["parameters"])
		}
		for _, k := range []string{"coverage", "query", "keywords", "repositories", "total_results", "new_results", "source_outcomes"} {
			if _, ok := e[k]; !ok {
				t.Errorf("execution %v lacks %s", e["id"], k)
			}
		}
	}
	for _, st := range []string{"completed", "failed", "running", "interrupted"} {
		if !statuses[st] {
			t.Errorf("no %s execution in the seed", st)
		}
	}
	if l := do(t, s, "GET", "/api/executions?limit=2&offset=1", nil).list(t); len(l) != 2 || l[0].(map[string]any)["id"] != list[1].(map[string]any)["id"] {
		t.Errorf("paging")
	}
	wantBody(t, do(t, s, "GET", "/api/executions?limit=501", nil),
		`{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 500","input":"501","ctx":{"le":500}}]}`)

	e5 := do(t, s, "GET", "/api/executions/5", nil).json(t)
	if e5["interrupted_reason"] != "owner_dead" || fmt.Sprint(e5["restarted_into"]) != "[7]" {
		t.Errorf("execution 5: %v %v", e5["interrupted_reason"], e5["restarted_into"])
	}
	e7 := do(t, s, "GET", "/api/executions/7", nil)
	keys := orderedKeys(t, e7.body)
	if tail := strings.Join(keys[len(keys)-10:], ","); tail != "saved_configuration_name,identity,coverage,query,keywords,repositories,total_results,new_results,source_outcomes,restarted_into" {
		t.Errorf("detail key order tail %s", tail)
	}
	if e7.json(t)["restarted_from"] != float64(5) {
		t.Errorf("restarted_from")
	}
}

// orderedKeys returns a JSON object's top-level keys in wire order.
func orderedKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object")
	}
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestReferencesExport(t *testing.T) {
	s := startSim(t, Options{})
	r := do(t, s, "GET", "/api/executions/1/references?format=json&include_ids=true", nil)
	wantStatus(t, r, 200)
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("Content-Disposition") != `attachment; filename="resmon-execution-1.json"` {
		t.Errorf("headers %v", r.header)
	}
	if !strings.HasPrefix(string(r.body), "[\n  {\n    \"title\": ") {
		t.Errorf("not a 2-space pretty array: %.40q", r.body)
	}
	rows := r.list(t)
	if r.header.Get("X-Resmon-Document-Count") != fmt.Sprint(len(rows)) || len(rows) == 0 {
		t.Errorf("document count header %q for %d rows", r.header.Get("X-Resmon-Document-Count"), len(rows))
	}
	if k := orderedKeys(t, mustJSON(t, rows[0])); len(k) != 10 {
		t.Errorf("json row keys %v", k)
	}
	if !strings.Contains(string(r.body), "\",\n    \"id\": ") {
		t.Errorf("id is not appended after abstract")
	}
	prev := "~"
	for _, row := range rows {
		d, _ := row.(map[string]any)["publication_date"].(string)
		if d > prev {
			t.Errorf("not publication_date DESC")
		}
		prev = d
	}
	plain := do(t, s, "GET", "/api/executions/1/references?format=json", nil)
	if strings.Contains(string(plain.body), `"id":`) {
		t.Errorf("ids without include_ids")
	}
	wantBody(t, do(t, s, "GET", "/api/executions/1/references?format=bibtex&include_ids=true", nil), `{"detail":"include_ids requires the json format"}`)
	wantBody(t, do(t, s, "GET", "/api/executions/1/references?format=endnote", nil),
		`{"detail":"Unknown export format 'endnote'. Expected one of: bibtex, csv, json, ris."}`)
	wantBody(t, do(t, s, "GET", "/api/executions/999/references", nil), `{"detail":"Execution not found"}`)
	bib := do(t, s, "GET", "/api/executions/1/references", nil)
	if bib.header.Get("Content-Type") != "application/x-bibtex" || !strings.HasPrefix(string(bib.body), "@article{") {
		t.Errorf("bibtex %v %.30q", bib.header.Get("Content-Type"), bib.body)
	}
	ris := do(t, s, "GET", "/api/executions/1/references?format=ris&only_new=true", nil)
	if !strings.HasPrefix(string(ris.body), "TY  - ") || !strings.Contains(ris.header.Get("Content-Disposition"), "resmon-execution-1-new.ris") {
		t.Errorf("ris %q", ris.header.Get("Content-Disposition"))
	}
	csvr := do(t, s, "GET", "/api/executions/1/references?format=csv", nil)
	if !strings.HasPrefix(string(csvr.body), "title,authors,") || csvr.header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Errorf("csv %.30q", csvr.body)
	}
	sel := do(t, s, "POST", "/api/export/references", map[string]any{"document_ids": []int{1, 2, 9999}, "format": "json"})
	if len(sel.list(t)) != 2 || !strings.Contains(sel.header.Get("Content-Disposition"), "resmon-selection.json") {
		t.Errorf("selection export %s", sel.body)
	}
	wantBody(t, do(t, s, "POST", "/api/export/references", map[string]any{"document_ids": []int{1}, "execution_ids": []int{1}}),
		`{"detail":"Choose document_ids or execution_ids, not both"}`)
	wantBody(t, do(t, s, "POST", "/api/export/references", map[string]any{"execution_ids": []int{1, 77}}), `{"detail":"Execution 77 not found"}`)
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSettingsRoundTrip(t *testing.T) {
	s := startSim(t, Options{})
	ai := do(t, s, "GET", "/api/settings/ai", nil).json(t)
	if len(ai) != 16 {
		t.Errorf("ai has %d keys", len(ai))
	}
	for k, v := range ai {
		if _, isStr := v.(string); !isStr {
			t.Errorf("ai.%s is %T", k, v)
		}
	}
	wantBody(t, do(t, s, "PUT", "/api/settings/ai", map[string]any{"settings": map[string]any{"ai_effort": "low", "bogus": "x", "ai_show_audit_prefix": false}}),
		`{"success":true}`)
	ai = do(t, s, "GET", "/api/settings/ai", nil).json(t)
	if ai["ai_effort"] != "low" || ai["ai_show_audit_prefix"] != "False" {
		t.Errorf("stored %v %v", ai["ai_effort"], ai["ai_show_audit_prefix"])
	}
	if _, ok := ai["bogus"]; ok {
		t.Errorf("foreign key stored")
	}
	if _, ok := s.StoredSetting("bogus"); ok {
		t.Errorf("foreign key reached storage")
	}
	wantStatus(t, do(t, s, "PUT", "/api/settings/ai", map[string]any{"settings": "x"}), 422)
	wantStatus(t, do(t, s, "PUT", "/api/settings/ai", map[string]any{}), 422)
	wantBody(t, do(t, s, "GET", "/api/settings/advanced", nil), `{"detail":"Not Found"}`)

	wantBody(t, do(t, s, "GET", "/api/settings/notifications", nil), `{"notify_manual":true,"notify_automatic_mode":"selected"}`)
	do(t, s, "PUT", "/api/settings/notifications", map[string]any{"settings": map[string]any{"notify_manual": "false", "notify_automatic_mode": "ALL"}})
	wantBody(t, do(t, s, "GET", "/api/settings/notifications", nil), `{"notify_manual":true,"notify_automatic_mode":"all"}`)
	if v, _ := s.StoredSetting("notify_manual"); v != "1" {
		t.Errorf("notify_manual stored %q (Python truthiness of \"false\" is True)", v)
	}
	do(t, s, "PUT", "/api/settings/notifications", map[string]any{"settings": map[string]any{"notify_manual": false}})
	if n := s.Settings("notifications"); n["notify_manual"] != false {
		t.Errorf("notify_manual %v", n["notify_manual"])
	}
	wantBody(t, do(t, s, "PUT", "/api/settings/notifications", map[string]any{"settings": map[string]any{"notify_automatic_mode": "some"}}),
		`{"detail":"notify_automatic_mode must be 'all', 'selected', or 'none'"}`)

	emb := do(t, s, "GET", "/api/settings/embeddings", nil)
	if strings.Join(orderedKeys(t, emb.body), ",") != "settings,providers,lane,capability,status" {
		t.Errorf("embeddings keys %v", orderedKeys(t, emb.body))
	}
	r := do(t, s, "PUT", "/api/settings/embeddings", map[string]any{"settings": map[string]any{"embedding_provider": "anthropic"}})
	wantStatus(t, r, 400)
	r = do(t, s, "PUT", "/api/settings/embeddings", map[string]any{"settings": map[string]any{"embedding_model": "all-minilm", "capability": "x"}})
	if b := r.json(t); b["success"] != true || b["capability"].(map[string]any)["model"] != "all-minilm" {
		t.Errorf("embeddings PUT %s", r.body)
	}
	if st := s.Settings("embeddings")["settings"].(map[string]any); st["embedding_model"] != "all-minilm" {
		t.Errorf("embedding_model %v", st["embedding_model"])
	}
	do(t, s, "PUT", "/api/settings/embeddings", map[string]any{"settings": map[string]any{"embedding_enabled": "false"}})
	if lane := s.Settings("embeddings")["lane"]; lane != nil {
		t.Errorf("lane %v with embeddings disabled", lane)
	}

	wantBody(t, do(t, s, "GET", "/api/settings/execution", nil), `{"max_concurrent_executions":3,"routine_fire_queue_limit":16}`)
	wantBody(t, do(t, s, "PUT", "/api/settings/execution", map[string]any{"max_concurrent_executions": 9, "routine_fire_queue_limit": 16}),
		`{"detail":"max_concurrent_executions must be between 1 and 8"}`)
}

func TestSweepLifecycleAndCap(t *testing.T) {
	s := startSim(t, Options{RunDuration: 30 * time.Millisecond})
	body := map[string]any{"query": "protein folding", "repositories": []string{"pubmed", "springer", "nowhere"}, "max_results": 5, "request_id": "req-1"}
	r := do(t, s, "POST", "/api/search/sweep", body)
	wantStatus(t, r, 200)
	id := int(r.json(t)["execution_id"].(float64))
	wantBody(t, r, fmt.Sprintf(`{"execution_id":%d}`, id))
	wantBody(t, do(t, s, "POST", "/api/search/sweep", body), fmt.Sprintf(`{"execution_id":%d,"duplicate":true}`, id))

	e := do(t, s, "GET", fmt.Sprintf("/api/executions/%d", id), nil).json(t)
	if e["execution_type"] != "deep_sweep" || e["owner_runtime_id"] != s.RuntimeID() {
		t.Errorf("new execution %v %v", e["execution_type"], e["owner_runtime_id"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for e["status"] == "running" && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		e = do(t, s, "GET", fmt.Sprintf("/api/executions/%d", id), nil).json(t)
	}
	if e["status"] != "completed" {
		t.Fatalf("run never completed: %v", e["status"])
	}
	so := e["source_outcomes"].(map[string]any)
	if so["selected"] != float64(3) || so["answered"] != float64(1) || so["could_not_answer"] != float64(2) {
		t.Errorf("source outcomes %v", so)
	}
	if e["result_count"].(float64) < 1 {
		t.Errorf("no results")
	}

	wantStatus(t, do(t, s, "PUT", "/api/settings/execution", map[string]any{"max_concurrent_executions": "1", "routine_fire_queue_limit": 16}), 200)
	// The seeded routine fire (execution 8) is still running: the cap of 1 is reached.
	capped := do(t, s, "POST", "/api/search/sweep", map[string]any{"query": "x", "repositories": []string{"arxiv"}})
	wantStatus(t, capped, 429)
	wantBody(t, capped, `{"detail":"resmon is already running the maximum of 1 concurrent executions. Wait for one to finish or raise the limit in Settings → Advanced."}`)
	if capped.header.Get("Retry-After") != "5" {
		t.Errorf("Retry-After %q", capped.header.Get("Retry-After"))
	}
	wantBody(t, do(t, s, "POST", "/api/search/sweep", nil), `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`)
	wantBody(t, do(t, s, "POST", "/api/search/sweep", map[string]any{}),
		`{"detail":[{"type":"missing","loc":["body","repositories"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","query"],"msg":"Field required","input":{}}]}`)
}

func TestCorpusIsDeterministic(t *testing.T) {
	a, b := startSim(t, Options{}), startSim(t, Options{})
	for _, p := range []string{"/api/routines", "/api/profiles", "/api/documents/7/lifecycle", "/api/repositories/catalog",
		"/api/profiles/1/matches", "/api/analytics/routine-health", "/api/routines/1/deliveries"} {
		if string(do(t, a, "GET", p, nil).body) != string(do(t, b, "GET", p, nil).body) {
			t.Errorf("%s differs between two simulators", p)
		}
	}
	if n := len(do(t, a, "GET", "/api/repositories/catalog", nil).list(t)); n != 27 {
		t.Errorf("catalog has %d entries", n)
	}
	e := startSim(t, Options{EmptyCorpus: true})
	wantBody(t, do(t, e, "GET", "/api/routines", nil), `[]`)
	wantBody(t, do(t, e, "GET", "/api/executions", nil), `[]`)
}

// Query parameters that fail to parse are all reported in one 422, in order, as FastAPI does;
// good ones pass.
func TestQueryValidationListsEveryBadParameter(t *testing.T) {
	s := startSim(t, Options{})
	for path, want := range map[string][]string{
		"/api/executions?limit=0&offset=x":                          {"limit", "offset"},
		"/api/executions?limit=abc":                                 {"limit"},
		"/api/executions/1/references?only_new=maybe&include_ids=x": {"only_new", "include_ids"},
	} {
		r := do(t, s, "GET", path, nil)
		wantStatus(t, r, 422)
		var body struct {
			Detail []struct{ Loc []any } `json:"detail"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s: %v %s", path, err, r.body)
		}
		var got []string
		for _, d := range body.Detail {
			if len(d.Loc) == 2 && d.Loc[0] == "query" {
				got = append(got, d.Loc[1].(string))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: errors for %v, want %v (%s)", path, got, want, r.body)
		}
	}
	wantStatus(t, do(t, s, "GET", "/api/executions?limit=5&offset=1", nil), 200)
}
