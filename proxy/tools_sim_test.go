package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/resmonsim"
)

// End to end: every tool through the real HTTP client against an in-process simulator.

func startSimClient(t *testing.T, opts resmonsim.Options) (*resmonsim.Sim, *Client) {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	sim, err := resmonsim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	c := NewClient(&discovery.Backend{BaseURL: sim.BaseURL(), Port: sim.Port(), Token: discovery.Token(sim.Token())},
		&ClientOptions{RequestTimeout: 10 * time.Second})
	t.Cleanup(c.Close)
	return sim, c
}

func TestToolsAgainstSimulator(t *testing.T) {
	sim, api := startSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	otherRuntime := "11111111-2222-4333-8444-555555555555"

	t.Run("health", func(t *testing.T) {
		out, te := callTool(t, api, "health", nil)
		wantNoErr(t, te)
		if id := valMap(valMap(out)["identity"])["runtime_id"]; id != sim.RuntimeID() {
			t.Errorf("identity = %v", id)
		}
		_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": sim.RuntimeID()})
		wantNoErr(t, te)
		_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": otherRuntime})
		wantErr(t, te, CodeInstanceMismatch, "different running app")
		if te.Detail["actual_runtime_id"] != sim.RuntimeID() {
			t.Errorf("detail = %v", te.Detail)
		}
	})
	t.Run("search_corpus", func(t *testing.T) {
		out, te := callTool(t, api, "search_corpus", map[string]any{"query": "for", "limit": 2})
		wantNoErr(t, te)
		o := valMap(out)
		if o["mode"] != "keyword" || o["count"] != 2 || o["next_cursor"] == nil {
			t.Fatalf("answer = %v", o)
		}
		next, te := callTool(t, api, "search_corpus", map[string]any{"query": "for", "limit": 2, "cursor": o["next_cursor"]})
		wantNoErr(t, te)
		if fmt.Sprint(valMap(valList(valMap(next)["papers"])[0])["id"]) == fmt.Sprint(valMap(valList(o["papers"])[0])["id"]) {
			t.Error("the cursor did not advance")
		}
		_, te = callTool(t, api, "search_corpus", map[string]any{"query": "for", "cursor": "garbage"})
		wantErr(t, te, CodeInvalidArgument, "Malformed cursor")
		out, te = callTool(t, api, "search_corpus", map[string]any{"query": "for", "mode": "semantic"})
		wantNoErr(t, te)
		if m := valMap(out)["mode"]; m == "keyword" && valMap(out)["mode_unavailable"] == nil {
			t.Error("a declined semantic search must say so")
		}
	})
	t.Run("find_similar", func(t *testing.T) {
		out, te := callTool(t, api, "find_similar", map[string]any{"doc_id": 1, "limit": 3})
		wantNoErr(t, te)
		o := valMap(out)
		if o["count"] == 0 && o["reason"] == nil {
			t.Errorf("empty similar list without a reason: %v", o)
		}
		_, te = callTool(t, api, "find_similar", map[string]any{"doc_id": "one"})
		wantErr(t, te, CodeInvalidArgument, "whole number")
	})
	t.Run("list_sources", func(t *testing.T) {
		out, te := callTool(t, api, "list_sources", map[string]any{"limit": 5})
		wantNoErr(t, te)
		if o := valMap(out); o["count"] != 5 || o["total"] != 27 {
			t.Errorf("count/total = %v/%v", o["count"], o["total"])
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/repositories/catalog", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_sources", nil)
		wantErr(t, te, CodeUpstreamError, "")
	})
	t.Run("list_routines", func(t *testing.T) {
		out, te := callTool(t, api, "list_routines", map[string]any{"active_only": true})
		wantNoErr(t, te)
		for _, r := range valList(valMap(out)["routines"]) {
			if valMap(r)["active"] != true {
				t.Errorf("inactive routine listed: %v", r)
			}
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/routines", Status: 503, Count: 1})
		_, te = callTool(t, api, "list_routines", nil)
		wantErr(t, te, CodeUpstreamError, "")
	})
	t.Run("get_routine", func(t *testing.T) {
		out, te := callTool(t, api, "get_routine", map[string]any{"routine_id": 1})
		wantNoErr(t, te)
		r := valMap(out)
		d := valMap(r["delivery"])
		if d == nil || d["enabled_target_count"] == nil || valMap(d["targets_by_channel"]) == nil {
			t.Fatalf("delivery = %v", r["delivery"])
		}
		if valMap(r["missed_fires"])["count"] == nil {
			t.Errorf("missed_fires = %v", r["missed_fires"])
		}
		text := mustJSON(t, out)
		for _, leak := range []string{"ada@example.org", "/home/resmon", "example.org/resmon-receiver", "target_snapshot"} {
			if strings.Contains(text, leak) {
				t.Errorf("get_routine leaked %q", leak)
			}
		}
		_, te = callTool(t, api, "get_routine", map[string]any{"routine_id": 9999})
		wantErr(t, te, CodeNotFound, "Routine not found")
	})
	t.Run("list_executions", func(t *testing.T) {
		out, te := callTool(t, api, "list_executions", map[string]any{"limit": 3})
		wantNoErr(t, te)
		o := valMap(out)
		if o["count"] != 3 {
			t.Errorf("count = %v", o["count"])
		}
		row := valMap(valList(o["executions"])[0])
		if _, ok := row["interrupted_reason"]; !ok {
			t.Error("interrupted_reason missing")
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/executions", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_executions", nil)
		wantErr(t, te, CodeUpstreamError, "")
	})
	t.Run("get_execution", func(t *testing.T) {
		out, te := callTool(t, api, "get_execution", map[string]any{"exec_id": 1, "expected_runtime_id": sim.RuntimeID()})
		wantNoErr(t, te)
		if fmt.Sprint(valMap(out)["id"]) != "1" {
			t.Errorf("execution = %v", out)
		}
		_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 99999})
		wantErr(t, te, CodeNotFound, "Execution not found")
		sim.ResetRequests()
		_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 1, "expected_runtime_id": otherRuntime})
		wantErr(t, te, CodeInstanceMismatch, "")
		for _, r := range sim.Requests() {
			if strings.HasPrefix(r.Path, "/api/executions") {
				t.Errorf("execution requested after a failed preflight: %s", r.Path)
			}
		}
	})
	t.Run("get_execution_results", func(t *testing.T) {
		out, te := callTool(t, api, "get_execution_results", map[string]any{"exec_id": 1, "limit": 2})
		wantNoErr(t, te)
		o := valMap(out)
		papers := valList(o["papers"])
		if len(papers) == 0 || valMap(papers[0])["id"] == nil {
			t.Fatalf("answer = %v", o)
		}
		// The id is usable as explain_match's doc_id.
		_, te = callTool(t, api, "explain_match", map[string]any{"doc_id": valMap(papers[0])["id"]})
		wantNoErr(t, te)
		_, te = callTool(t, api, "get_execution_results", map[string]any{"exec_id": 99999})
		wantErr(t, te, CodeNotFound, "")
	})
	t.Run("get_search_record", func(t *testing.T) {
		out, te := callTool(t, api, "get_search_record", map[string]any{"exec_id": 1})
		wantNoErr(t, te)
		if valList(valMap(out)["caveats"]) == nil {
			t.Errorf("caveats missing: %v", out)
		}
		_, te = callTool(t, api, "get_search_record", map[string]any{"exec_id": 99999})
		wantErr(t, te, CodeNotFound, "No execution with id 99999")
	})
	t.Run("explain_match", func(t *testing.T) {
		out, te := callTool(t, api, "explain_match", map[string]any{"doc_id": 1})
		wantNoErr(t, te)
		if valMap(out)["what_resmon_cannot_see"] == nil {
			t.Errorf("caveats stripped: %v", out)
		}
		_, te = callTool(t, api, "explain_match", map[string]any{"doc_id": 99999})
		wantErr(t, te, CodeNotFound, "No document with id 99999")
	})
	t.Run("get_paper_lifecycle", func(t *testing.T) {
		out, te := callTool(t, api, "get_paper_lifecycle", map[string]any{"doc_id": 7})
		wantNoErr(t, te)
		if valMap(out)["events"] == nil {
			t.Errorf("lifecycle = %v", out)
		}
		_, te = callTool(t, api, "get_paper_lifecycle", map[string]any{"doc_id": 99999})
		wantErr(t, te, CodeNotFound, "")
	})
	t.Run("get_analytics", func(t *testing.T) {
		for view := range analyticsPaths {
			out, te := callTool(t, api, "get_analytics", map[string]any{"view": view})
			wantNoErr(t, te)
			if valMap(out) == nil {
				t.Errorf("%s: %v", view, out)
			}
		}
		_, te := callTool(t, api, "get_analytics", map[string]any{"view": "weather"})
		wantErr(t, te, CodeInvalidArgument, "routine-health")
	})
	t.Run("get_watchdog_findings", func(t *testing.T) {
		out, te := callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": true})
		wantNoErr(t, te)
		if valMap(out)["thresholds"] == nil {
			t.Errorf("watchdog = %v", out)
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/watchdog", Status: 500, Count: 1})
		_, te = callTool(t, api, "get_watchdog_findings", nil)
		wantErr(t, te, CodeUpstreamError, "")
	})
	t.Run("export_references", func(t *testing.T) {
		out, te := callTool(t, api, "export_references", map[string]any{"exec_id": 1})
		wantNoErr(t, te)
		if s, ok := out.(string); !ok || !strings.Contains(s, "@") {
			t.Errorf("bibtex = %#v", out)
		}
		out, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{1, 2}, "format": "ris"})
		wantNoErr(t, te)
		if s, ok := out.(string); !ok || !strings.Contains(s, "TY  -") {
			t.Errorf("ris = %#v", out)
		}
		_, te = callTool(t, api, "export_references", map[string]any{"exec_id": 1, "format": "docx"})
		wantErr(t, te, CodeInvalidArgument, "Unknown export format")
		_, te = callTool(t, api, "export_references", map[string]any{"exec_id": 99999})
		wantErr(t, te, CodeNotFound, "")
	})
	t.Run("list_watch_profiles", func(t *testing.T) {
		out, te := callTool(t, api, "list_watch_profiles", nil)
		wantNoErr(t, te)
		o := valMap(out)
		if o["total"] != 3 {
			t.Errorf("total = %v", o["total"])
		}
		for _, p := range valList(o["profiles"]) {
			if _, ok := valMap(p)["basis_warning"]; !ok {
				t.Errorf("row without basis_warning: %v", p)
			}
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/profiles", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_watch_profiles", nil)
		wantErr(t, te, CodeUpstreamError, "")
	})
	t.Run("get_watch_profile", func(t *testing.T) {
		out, te := callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 1})
		wantNoErr(t, te)
		if valMap(valMap(out)["profile"])["display_name"] != "Ada Lovelace" || valMap(valMap(out)["matches"])["total"] == nil {
			t.Errorf("profile = %v", out)
		}
		_, te = callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 99999})
		wantErr(t, te, CodeNotFound, "That profile does not exist.")
	})
	t.Run("get_profile_matches", func(t *testing.T) {
		out, te := callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 3, "limit": 3})
		wantNoErr(t, te)
		o := valMap(out)
		checkGlossary(t, o)
		for _, m := range valList(o["matches"]) {
			for _, k := range []string{"basis", "matched_author", "evidence"} {
				if _, ok := valMap(m)[k]; !ok {
					t.Errorf("match without %s: %v", k, m)
				}
			}
		}
		_, te = callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 99999})
		wantErr(t, te, CodeNotFound, "")
	})
	t.Run("create_watch_profile", func(t *testing.T) {
		out, te := callTool(t, api, "create_watch_profile", map[string]any{"name": "Mary Somerville"})
		wantNoErr(t, te)
		o := valMap(out)
		if o["basis_warning"] == nil || !strings.HasPrefix(o["detail"].(string), "Created. ") {
			t.Errorf("no-identifier profile without its warning: %v", o)
		}
		_, te = callTool(t, api, "create_watch_profile", map[string]any{"name": "X", "orcid": "not-an-orcid"})
		wantErr(t, te, CodeInvalidArgument, "")
	})
	var routineID any
	t.Run("create_routine", func(t *testing.T) {
		out, te := callTool(t, api, "create_routine", map[string]any{"name": "Graphs weekly", "keywords": []any{"graph", "attention"},
			"sources": []any{"arxiv"}, "schedule": "0 7 * * 1", "intent": "Graph attention papers."})
		wantNoErr(t, te)
		r := valMap(valMap(out)["routine"])
		if r["is_active"] != false || r["intent"] != "Graph attention papers." {
			t.Fatalf("created = %v", r)
		}
		routineID = r["id"]
		_, te = callTool(t, api, "create_routine", map[string]any{"name": "W", "keywords": []any{}, "sources": []any{"arxiv"},
			"schedule": "0 7 * * 1", "entity": map[string]any{"profile_id": 99999, "mode": "new_papers"}})
		wantErr(t, te, CodeInvalidArgument, "")
	})
	t.Run("activate_deactivate_routine", func(t *testing.T) {
		out, te := callTool(t, api, "activate_routine", map[string]any{"routine_id": routineID})
		wantNoErr(t, te)
		if valMap(out)["is_active"] != true {
			t.Errorf("activate = %v", out)
		}
		got, _ := callTool(t, api, "get_routine", map[string]any{"routine_id": routineID})
		if valMap(got)["is_active"] != true {
			t.Errorf("not active after activate: %v", valMap(got)["is_active"])
		}
		out, te = callTool(t, api, "deactivate_routine", map[string]any{"routine_id": routineID})
		wantNoErr(t, te)
		if valMap(out)["is_active"] != false {
			t.Errorf("deactivate = %v", out)
		}
		_, te = callTool(t, api, "activate_routine", map[string]any{"routine_id": 99999})
		wantErr(t, te, CodeNotFound, "Routine not found")
		_, te = callTool(t, api, "deactivate_routine", map[string]any{"routine_id": 99999})
		wantErr(t, te, CodeNotFound, "Routine not found")
	})
	t.Run("run_routine", func(t *testing.T) {
		// RunDuration is an hour, so the first run is still running when the second arrives.
		out, te := callTool(t, api, "run_routine", map[string]any{"routine_id": routineID})
		wantNoErr(t, te)
		first := valMap(out)["execution_id"]
		if first == nil || valMap(out)["was_inactive"] != true {
			t.Fatalf("run = %v", out)
		}
		_, te = callTool(t, api, "run_routine", map[string]any{"routine_id": routineID})
		wantErr(t, te, CodeConflict, "already running")
		if te.Detail["conflict"] != "routine_already_running" || fmt.Sprint(te.Detail["execution_id"]) != fmt.Sprint(first) {
			t.Errorf("conflict detail = %v, first run %v", te.Detail, first)
		}
		_, te = callTool(t, api, "run_routine", map[string]any{"routine_id": 99999})
		wantErr(t, te, CodeNotFound, "Routine not found")
	})
	t.Run("run_sweep", func(t *testing.T) {
		out, te := callTool(t, api, "run_sweep", map[string]any{"query": "diffusion", "sources": []any{"arxiv"}})
		wantNoErr(t, te)
		id := valMap(out)["execution_id"]
		exec, te := callTool(t, api, "get_execution", map[string]any{"exec_id": id})
		wantNoErr(t, te)
		if valMap(exec)["status"] != "running" {
			t.Errorf("new sweep status = %v", valMap(exec)["status"])
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/search/sweep", Status: http.StatusTooManyRequests, Count: 1})
		_, te = callTool(t, api, "run_sweep", map[string]any{"query": "diffusion", "sources": []any{"arxiv"}})
		wantErr(t, te, CodeConflict, "")
	})
	t.Run("update_settings", func(t *testing.T) {
		out, te := callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": "False"}})
		wantNoErr(t, te)
		c := valMap(valMap(out)["changed"])["notify_manual"]
		if !(valMap(c)["from"] == true && valMap(c)["to"] == false) {
			t.Errorf("notify_manual diff = %v (the string \"False\" must turn it off)", c)
		}
		if v := sim.Settings("notifications")["notify_manual"]; v != false {
			t.Errorf("stored notify_manual = %v", v)
		}
		out, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "low"}})
		wantNoErr(t, te)
		if valMap(valMap(out)["changed"])["ai_effort"] == nil {
			t.Errorf("ai diff = %v", out)
		}
		_, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "nomic-embed-text"}})
		wantNoErr(t, te)
		_, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_provder": "x"}})
		wantErr(t, te, CodeInvalidArgument, "no setting called 'ai_provder'")
	})
}

// TestTokenNeverInOutput runs every tool, every route case and the error paths against the
// simulator and checks that its token appears in no payload and no error. The assertion is on
// the raw tool output, before the server's scrubber, so the scrubber cannot hide a leak.
func TestTokenNeverInOutput(t *testing.T) {
	sim, api := startSimClient(t, resmonsim.Options{})
	token := sim.Token()
	if len(token) < 32 {
		t.Fatalf("simulator token too short to be distinctive: %d", len(token))
	}
	check := func(label string, out any, te *ToolError) {
		t.Helper()
		text := mustJSON(t, out)
		if te != nil {
			text += mustJSON(t, te) + te.Error()
		}
		if strings.Contains(text, token) {
			t.Errorf("%s: the token appears in the output", label)
		}
	}
	cases := routeCases()
	// Error paths: local refusals, backend refusals, missing items.
	cases = append(cases,
		routeCase{"get_routine", map[string]any{"routine_id": 99999}},
		routeCase{"get_execution", map[string]any{"exec_id": 99999, "expected_runtime_id": sim.RuntimeID()}},
		routeCase{"health", map[string]any{"expected_runtime_id": "bad"}},
		routeCase{"search_corpus", map[string]any{"query": "x", "cursor": "garbage"}},
		routeCase{"update_settings", map[string]any{"group": "ai", "settings": map[string]any{"api_token": token}}},
	)
	for _, c := range cases {
		out, te := callTool(t, api, c.tool, c.args)
		check(c.tool, out, te)
	}
	// Fault injections: 500, malformed JSON, a dropped connection.
	for _, f := range []resmonsim.Fault{{PathPrefix: "/api", Status: 500}, {PathPrefix: "/api", MalformedJSON: true}, {PathPrefix: "/api", Drop: true}} {
		sim.SetFault(f)
		for _, tool := range Tools {
			out, te := callTool(t, api, tool.Name, toolArgs[tool.Name])
			check(fmt.Sprintf("%s under %+v", tool.Name, f), out, te)
		}
		sim.ClearFaults()
	}
	// A restart rotates the token: every call is then refused with 401, and then nothing answers.
	if err := sim.Restart(resmonsim.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range Tools {
		out, te := callTool(t, api, tool.Name, toolArgs[tool.Name])
		if te == nil {
			t.Errorf("%s: answered with a stale token", tool.Name)
		}
		check(tool.Name+" after restart", out, te)
	}
	_ = sim.Stop()
	for _, tool := range Tools {
		out, te := callTool(t, api, tool.Name, toolArgs[tool.Name])
		check(tool.Name+" with the backend down", out, te)
	}
}
