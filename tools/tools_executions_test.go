package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// The health and execution tools: health, get_execution (with runtime identity),
// list_executions, get_execution_results, get_search_record, run_sweep.

func TestHealthChecksAnExpectedRuntimeID(t *testing.T) {
	bad := map[any]string{
		"": badRuntimeID, nil: badRuntimeID, "bad": badRuntimeID, strings.ToUpper(fakeRuntimeID): badRuntimeID,
		"3f0c6a0e-8a0b-1e53-9d0f-2c5b1a7e9d41": badRuntimeID, "{" + fakeRuntimeID + "}": badRuntimeID,
		7: "'expected_runtime_id' must be a string, not a number.",
	}
	for v, msg := range bad {
		api := newFakeAPI()
		_, te := callTool(t, api, "health", map[string]any{"expected_runtime_id": v})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, msg)
		if n := len(api.requests()); n != 0 {
			t.Errorf("%#v: %d requests before validation", v, n)
		}
	}
	api := newFakeAPI()
	out, te := callTool(t, api, "health", nil)
	backendtest.WantNoErr(t, te)
	if ValMap(out)["version"] != "2.3.0" {
		t.Errorf("health not passed through: %v", out)
	}
	if r := api.requests()[0]; r.Query != nil || r.ExpectedRuntimeID != "" {
		t.Errorf("unbound health carried an expectation: %+v", r)
	}

	api.reset()
	_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": fakeRuntimeID})
	backendtest.WantNoErr(t, te)
	r := api.requests()[0]
	if r.Query.Get("expected_runtime_id") != fakeRuntimeID || r.ExpectedRuntimeID != fakeRuntimeID {
		t.Errorf("expectation not sent: %+v", r)
	}

	other := "11111111-2222-4333-8444-555555555555"
	_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": other})
	backendtest.WantErr(t, te, backend.CodeInstanceMismatch, "different running app")
	if te.Detail["expected_runtime_id"] != other || te.Detail["actual_runtime_id"] != fakeRuntimeID {
		t.Errorf("detail = %v", te.Detail)
	}

	legacy := newFakeAPI()
	legacy.override = func(r *backend.Request) (any, error, bool) {
		return decodeJSONText(`{"status":"ok","version":"2.1.0"}`), nil, true
	}
	_, te = callTool(t, legacy, "health", map[string]any{"expected_runtime_id": fakeRuntimeID})
	backendtest.WantErr(t, te, backend.CodeIdentityUnavailable, "runtime identity")
}

func TestGetExecutionPreflightsAnExpectedRuntimeID(t *testing.T) {
	api := newFakeAPI()
	// The expectation is judged before exec_id.
	_, te := callTool(t, api, "get_execution", map[string]any{"expected_runtime_id": "bad"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "UUID4")
	_, te = callTool(t, api, "get_execution", map[string]any{})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'exec_id' is required.")

	out, te := callTool(t, api, "get_execution", map[string]any{"exec_id": 7})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions/7"}) {
		t.Errorf("unbound: %v", got)
	}
	if ValMap(out)["status"] != "completed" {
		t.Errorf("not passed through: %v", out)
	}

	api.reset()
	q := "expected_runtime_id=" + fakeRuntimeID
	out, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/health?" + q, "GET /api/executions/7?" + q}) {
		t.Errorf("bound: %v", got)
	}
	if ValMap(out)["identity"] == nil {
		t.Error("identity dropped from the execution body")
	}

	// A different app at preflight: one request, no execution read.
	api.reset()
	api.runtimeID = "11111111-2222-4333-8444-555555555555"
	_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	backendtest.WantErr(t, te, backend.CodeInstanceMismatch, "different running app")
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests after a failed preflight", n)
	}

	// Replaced after the preflight: the execution reply lacks identity; its content is dropped.
	swapped := newFakeAPI()
	swapped.override = func(r *backend.Request) (any, error, bool) {
		if strings.HasPrefix(r.Path, "/api/executions/") {
			return decodeJSONText(`{"id":7,"note":"private content"}`), nil, true
		}
		return nil, nil, false
	}
	_, te = callTool(t, swapped, "get_execution", map[string]any{"exec_id": 7, "expected_runtime_id": fakeRuntimeID})
	backendtest.WantErr(t, te, backend.CodeIdentityUnavailable, "")
	if strings.Contains(mustJSON(t, te), "private content") {
		t.Error("discarded content leaked into the error")
	}
}

func TestListExecutionsFiltersAndPagesTheRecentRuns(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_executions", nil)
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions?limit=500"}) {
		t.Errorf("requests = %v", got)
	}
	o := ValMap(out)
	if o["count"] != 25 || o["total"] != 30 || o["total_is_capped"] != false {
		t.Errorf("default page = %v/%v", o["count"], o["total"])
	}
	row := ValMap(ValList(o["executions"])[0])
	for _, k := range []string{"id", "type", "status", "started", "finished", "result_count", "interrupted_reason", "restarted_from"} {
		if _, ok := row[k]; !ok {
			t.Errorf("projection lacks %s", k)
		}
	}
	if _, ok := row["coverage"]; ok {
		t.Error("projection carries coverage")
	}
	out, _ = callTool(t, api, "list_executions", map[string]any{"routine_id": 4, "status": "interrupted", "limit": 2, "offset": 1})
	o = ValMap(out)
	// ids 30..1: routine 4 on even ids, interrupted on multiples of 3 → 30, 24, 18, 12, 6.
	if o["total"] != 5 || o["count"] != 2 || fmt.Sprint(ValMap(ValList(o["executions"])[0])["id"]) != "24" {
		t.Errorf("filtered = %v", o)
	}
	_, te = callTool(t, api, "list_executions", map[string]any{"routine_id": "four"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'routine_id' must be an integer (a whole number), not a string.")

	big := newFakeAPI()
	big.override = func(r *backend.Request) (any, error, bool) {
		rows := make([]any, 500)
		for i := range rows {
			rows[i] = map[string]any{"id": json.Number(fmt.Sprint(500 - i)), "status": "completed"}
		}
		return rows, nil, true
	}
	out, _ = callTool(t, big, "list_executions", map[string]any{"limit": 100})
	if o := ValMap(out); o["count"] != 100 || o["total"] != 500 || o["total_is_capped"] != true {
		t.Errorf("capped = %v/%v/%v", o["count"], o["total"], o["total_is_capped"])
	}
}

func TestGetExecutionResultsPagesTheExportWithCorpusIDs(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "get_execution_results", map[string]any{"exec_id": 3})
	backendtest.WantNoErr(t, te)
	r := api.requests()[0]
	if r.Path != "/api/executions/3/references" || r.Query.Get("format") != "json" || r.Query.Get("include_ids") != "true" {
		t.Errorf("request = %+v", r)
	}
	o := ValMap(out)
	if o["count"] != 25 || o["total"] != 60 {
		t.Errorf("page = %v/%v", o["count"], o["total"])
	}
	if fmt.Sprint(ValMap(ValList(o["papers"])[0])["id"]) != "1" {
		t.Errorf("paper ids not kept: %v", ValList(o["papers"])[0])
	}
	out, _ = callTool(t, api, "get_execution_results", map[string]any{"exec_id": 3, "offset": 50, "limit": 25})
	if o := ValMap(out); o["count"] != 10 || fmt.Sprint(ValMap(ValList(o["papers"])[0])["id"]) != "51" {
		t.Errorf("last page = %v", o)
	}
	for _, r := range api.requests() {
		if strings.HasSuffix(r.Path, "/report") {
			t.Error("the full report was requested")
		}
	}
	garbled := newFakeAPI()
	garbled.override = func(*backend.Request) (any, error, bool) { return "[{not json", nil, true }
	_, te = callTool(t, garbled, "get_execution_results", map[string]any{"exec_id": 3})
	backendtest.WantErr(t, te, backend.CodeUpstreamError, "could not be read")
	refused := newFakeAPI()
	refused.override = func(*backend.Request) (any, error, bool) {
		return nil, backend.NewError(backend.CodeInvalidArgument, "Unknown export format 'json'. Expected one of: bibtex, csv, ris.", nil), true
	}
	_, te = callTool(t, refused, "get_execution_results", map[string]any{"exec_id": 3})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Unknown export format")
}

func TestRunSweepStartsAndReturnsTheExecutionID(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "run_sweep", map[string]any{"query": "x"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'sources' is required.")
	_, te = callTool(t, api, "run_sweep", map[string]any{"sources": []any{"arxiv"}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'query' is required.")
	_, te = callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": []any{"arxiv"}, "ai_enabled": "sure"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'ai_enabled' must be a boolean (true or false), not a string.")
	if len(api.requests()) != 0 {
		t.Fatal("refused call made a request")
	}
	out, te := callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": []any{"arxiv", "openalex"}, "ai_enabled": false, "date_to": "2026"})
	backendtest.WantNoErr(t, te)
	r := api.requests()[0]
	want := map[string]any{"query": "x", "repositories": []string{"arxiv", "openalex"}, "max_results": int64(50), "ai_enabled": false, "date_to": "2026"}
	if !r.Write || !reflect.DeepEqual(r.Body, want) {
		t.Errorf("request = %+v", r)
	}
	if o := ValMap(out); fmt.Sprint(o["execution_id"]) != "42" || !strings.Contains(o["detail"].(string), "get_execution") {
		t.Errorf("answer = %v", o)
	}
	api.reset()
	callTool(t, api, "run_sweep", map[string]any{"query": "x", "sources": []any{"arxiv"}, "max_results": 10})
	if b := ValMap(api.requests()[0].Body); !reflect.DeepEqual(b["repositories"], []string{"arxiv"}) || b["max_results"] != int64(10) {
		t.Errorf("body = %v", b)
	}
}

// TestExecutionToolsAgainstTheSimulator: every executions tool through the real HTTP client against an in-process simulator.
func TestExecutionToolsAgainstTheSimulator(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	otherRuntime := "11111111-2222-4333-8444-555555555555"
	t.Run("health", func(t *testing.T) {
		out, te := callTool(t, api, "health", nil)
		backendtest.WantNoErr(t, te)
		if id := ValMap(ValMap(out)["identity"])["runtime_id"]; id != sim.RuntimeID() {
			t.Errorf("identity = %v", id)
		}
		_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": sim.RuntimeID()})
		backendtest.WantNoErr(t, te)
		_, te = callTool(t, api, "health", map[string]any{"expected_runtime_id": otherRuntime})
		backendtest.WantErr(t, te, backend.CodeInstanceMismatch, "different running app")
		if te.Detail["actual_runtime_id"] != sim.RuntimeID() {
			t.Errorf("detail = %v", te.Detail)
		}
	})
	t.Run("list_executions", func(t *testing.T) {
		out, te := callTool(t, api, "list_executions", map[string]any{"limit": 3})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		if o["count"] != 3 {
			t.Errorf("count = %v", o["count"])
		}
		row := ValMap(ValList(o["executions"])[0])
		if _, ok := row["interrupted_reason"]; !ok {
			t.Error("interrupted_reason missing")
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/executions", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_executions", nil)
		backendtest.WantErr(t, te, backend.CodeUpstreamError, "")
	})
	t.Run("get_execution", func(t *testing.T) {
		out, te := callTool(t, api, "get_execution", map[string]any{"exec_id": 1, "expected_runtime_id": sim.RuntimeID()})
		backendtest.WantNoErr(t, te)
		if fmt.Sprint(ValMap(out)["id"]) != "1" {
			t.Errorf("execution = %v", out)
		}
		_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "Execution not found")
		sim.ResetRequests()
		_, te = callTool(t, api, "get_execution", map[string]any{"exec_id": 1, "expected_runtime_id": otherRuntime})
		backendtest.WantErr(t, te, backend.CodeInstanceMismatch, "")
		for _, r := range sim.Requests() {
			if strings.HasPrefix(r.Path, "/api/executions") {
				t.Errorf("execution requested after a failed preflight: %s", r.Path)
			}
		}
	})
	t.Run("get_execution_results", func(t *testing.T) {
		out, te := callTool(t, api, "get_execution_results", map[string]any{"exec_id": 1, "limit": 2})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		papers := ValList(o["papers"])
		if len(papers) == 0 || ValMap(papers[0])["id"] == nil {
			t.Fatalf("answer = %v", o)
		}
		// The id is usable as explain_match's doc_id.
		_, te = callTool(t, api, "explain_match", map[string]any{"doc_id": ValMap(papers[0])["id"]})
		backendtest.WantNoErr(t, te)
		_, te = callTool(t, api, "get_execution_results", map[string]any{"exec_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "")
	})
	t.Run("get_search_record", func(t *testing.T) {
		out, te := callTool(t, api, "get_search_record", map[string]any{"exec_id": 1})
		backendtest.WantNoErr(t, te)
		if ValList(ValMap(out)["caveats"]) == nil {
			t.Errorf("caveats missing: %v", out)
		}
		_, te = callTool(t, api, "get_search_record", map[string]any{"exec_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "No execution with id 99999")
	})
	t.Run("run_sweep", func(t *testing.T) {
		out, te := callTool(t, api, "run_sweep", map[string]any{"query": "diffusion", "sources": []any{"arxiv"}})
		backendtest.WantNoErr(t, te)
		id := ValMap(out)["execution_id"]
		exec, te := callTool(t, api, "get_execution", map[string]any{"exec_id": id})
		backendtest.WantNoErr(t, te)
		if ValMap(exec)["status"] != "running" {
			t.Errorf("new sweep status = %v", ValMap(exec)["status"])
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/search/sweep", Status: http.StatusTooManyRequests, Count: 1})
		_, te = callTool(t, api, "run_sweep", map[string]any{"query": "diffusion", "sources": []any{"arxiv"}})
		backendtest.WantErr(t, te, backend.CodeConflict, "")
	})
}
