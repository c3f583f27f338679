package tools

import (
	"context"
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

// The routine tools: list_routines, get_routine, create_routine, run_routine,
// activate_routine, deactivate_routine.

func TestListRoutinesReadsTermsFromStoredParameters(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_routines", nil)
	backendtest.WantNoErr(t, te)
	o := ValMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Fatalf("answer = %v", o)
	}
	first := ValMap(ValList(o["routines"])[0])
	if first["active"] != true || first["schedule"] != "0 7 * * 1" || ValMap(first["missed_fires"])["count"] == nil {
		t.Errorf("first = %v", first)
	}
	if !reflect.DeepEqual(first["sources"], []any{"arxiv"}) || !reflect.DeepEqual(first["keywords"], []any{"diffusion turbulence"}) {
		t.Errorf("terms = %v %v", first["sources"], first["keywords"])
	}
	second := ValMap(ValList(o["routines"])[1])
	if second["active"] != false || !reflect.DeepEqual(second["keywords"], []any{"a", "b"}) || second["last_run"] != "2026-09-01 08:00:00" {
		t.Errorf("second = %v", second)
	}
	out, _ = callTool(t, api, "list_routines", map[string]any{"active_only": true})
	if o := ValMap(out); o["total"] != 1 {
		t.Errorf("active_only = %v", o)
	}
	out, _ = callTool(t, api, "list_routines", map[string]any{"limit": 1, "offset": 1})
	if o := ValMap(out); o["count"] != 1 || o["total"] != 2 || ValMap(ValList(o["routines"])[0])["name"] != "Idle" {
		t.Errorf("paged = %v", o)
	}
	_, te = callTool(t, api, "list_routines", map[string]any{"active_only": "perhaps"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'active_only' must be a boolean (true or false), not a string.")
}

func TestGetRoutineAddsCoverageAndDeliveryWithoutAddresses(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "get_routine", map[string]any{})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "routine_id")
	out, te := callTool(t, api, "get_routine", map[string]any{"routine_id": 1})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/routines/1", "GET /api/routines/1/coverage", "GET /api/routines/1/deliveries"}) {
		t.Errorf("requests = %v", got)
	}
	r := ValMap(out)
	cov := ValMap(r["coverage"])
	if fmt.Sprint(cov["off_target_count"]) != "312" || fmt.Sprint(cov["missed_in_corpus_count"]) != "63" || cov["missed_in_corpus_count_is_lower_bound"] != true {
		t.Errorf("coverage = %v", cov)
	}
	if _, ok := cov["off_target"]; ok {
		t.Error("coverage lists must not be returned")
	}
	if r["missed_fires"] == nil || r["missed_fire_details"] == nil {
		t.Error("missed fires dropped")
	}
	d := ValMap(r["delivery"])
	wantKeys := []string{"awaiting_review", "enabled_target_count", "last_attempts", "last_channel", "last_delivered_at_utc", "last_error", "last_state", "targets_by_channel"}
	if got := sortedKeys(d); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("delivery keys = %v", got)
	}
	if fmt.Sprint(ValMap(d["targets_by_channel"])["webhook"]) != "2" || fmt.Sprint(d["enabled_target_count"]) != "3" || d["last_state"] != "failed" {
		t.Errorf("delivery = %v", d)
	}
	text := mustJSON(t, out)
	for _, leak := range []string{"jane@example.org", "/home/jane", "hooks.example.org", "target_snapshot"} {
		if strings.Contains(text, leak) {
			t.Errorf("get_routine leaked %q", leak)
		}
	}

	never := newFakeAPI()
	never.override = func(r *backend.Request) (any, error, bool) {
		if strings.HasSuffix(r.Path, "/deliveries") {
			return decodeJSONText(`{"routine_id":1,"deliveries":[],"summary":{"targets":{},"enabled_target_count":0,"awaiting_review":0,"last":null}}`), nil, true
		}
		return nil, nil, false
	}
	out, _ = callTool(t, never, "get_routine", map[string]any{"routine_id": 1})
	d = ValMap(ValMap(out)["delivery"])
	for _, k := range []string{"last_state", "last_channel", "last_attempts", "last_error", "last_delivered_at_utc"} {
		if v, ok := d[k]; !ok || v != nil {
			t.Errorf("never delivered: %s = %v (present %v)", k, v, ok)
		}
	}

	for _, missing := range []*backend.ToolError{backend.NewError(backend.CodeNotFound, "Not Found", nil), backend.NewError(backend.CodeInternalError, "Method Not Allowed", nil)} {
		old := newFakeAPI()
		old.override = func(r *backend.Request) (any, error, bool) {
			if strings.HasSuffix(r.Path, "/deliveries") || strings.HasSuffix(r.Path, "/coverage") {
				return nil, missing, true
			}
			return nil, nil, false
		}
		out, te = callTool(t, old, "get_routine", map[string]any{"routine_id": 1})
		backendtest.WantNoErr(t, te)
		if _, ok := ValMap(out)["delivery"]; ok {
			t.Errorf("%s: delivery key present for a backend without the route", missing.Message)
		}
		if _, ok := ValMap(out)["coverage"]; ok {
			t.Errorf("coverage present although the coverage call failed")
		}
	}

	failing := newFakeAPI()
	failing.override = func(r *backend.Request) (any, error, bool) {
		if strings.HasSuffix(r.Path, "/deliveries") {
			return nil, backend.NewError(backend.CodeUpstreamError, "resmon reported an internal error.", nil), true
		}
		return nil, nil, false
	}
	_, te = callTool(t, failing, "get_routine", map[string]any{"routine_id": 1})
	backendtest.WantErr(t, te, backend.CodeUpstreamError, "internal error")

	gone := newFakeAPI()
	gone.override = func(r *backend.Request) (any, error, bool) {
		return nil, backend.NewError(backend.CodeNotFound, "Routine not found", nil), true
	}
	_, te = callTool(t, gone, "get_routine", map[string]any{"routine_id": 99})
	backendtest.WantErr(t, te, backend.CodeNotFound, "Routine not found")
}

func TestCreateRoutineCreatesItInactive(t *testing.T) {
	api := newFakeAPI()
	for _, k := range []string{"name", "keywords", "sources", "schedule"} {
		args := map[string]any{}
		for kk, v := range example("create_routine") {
			if kk != k {
				args[kk] = v
			}
		}
		_, te := callTool(t, api, "create_routine", args)
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'"+k+"' is required.")
	}
	out, te := callTool(t, api, "create_routine", example("create_routine"))
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"POST /api/routines", "GET /api/routines/7"}) {
		t.Errorf("requests = %v", got)
	}
	body := ValMap(api.requests()[0].Body)
	if body["is_active"] != false || body["ai_enabled"] != false || body["schedule_cron"] != "0 7 * * 1" {
		t.Errorf("body = %v", body)
	}
	if _, ok := body["intent"]; ok {
		t.Error("intent sent although not given")
	}
	params := ValMap(body["parameters"])
	if params["query"] != "quantum error" || !reflect.DeepEqual(params["repositories"], []string{"arxiv"}) {
		t.Errorf("parameters = %v", params)
	}
	o := ValMap(out)
	if ValMap(o["routine"])["is_active"] != false || !strings.Contains(o["detail"].(string), "Activate it") {
		t.Errorf("answer = %v", o)
	}

	warned := newFakeAPI()
	warned.override = func(r *backend.Request) (any, error, bool) {
		if r.Method == http.MethodPost {
			return decodeJSONText(`{"id":7,"name":"W","entity_warning":"None of these sources can be asked about an author."}`), nil, true
		}
		return nil, nil, false
	}
	args := map[string]any{"intent": "  new closures  ", "entity": map[string]any{"profile_id": 1, "mode": "new_papers"}}
	for k, v := range example("create_routine") {
		args[k] = v
	}
	out, te = callTool(t, warned, "create_routine", args)
	backendtest.WantNoErr(t, te)
	body = ValMap(warned.requests()[0].Body)
	if body["intent"] != "new closures" || ValMap(ValMap(body["parameters"])["entity"])["mode"] != "new_papers" {
		t.Errorf("body = %v", body)
	}
	o = ValMap(out)
	if o["entity_warning"] == nil || !strings.HasSuffix(o["detail"].(string), "asked about an author.") {
		t.Errorf("warning not lifted: %v", o)
	}
	rejected := newFakeAPI()
	rejected.override = func(r *backend.Request) (any, error, bool) {
		return nil, backend.NewError(backend.CodeInvalidArgument, "That profile does not exist.", nil), true
	}
	_, te = callTool(t, rejected, "create_routine", args)
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "profile does not exist")
}

func TestRunRoutineNamesTheRunningExecutionAndTogglesPassThrough(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "run_routine", map[string]any{"routine_id": 7})
	backendtest.WantNoErr(t, te)
	if o := ValMap(out); fmt.Sprint(o["execution_id"]) != "43" || o["was_inactive"] != true {
		t.Errorf("answer = %v", o)
	}
	if r := api.requests()[0]; r.Method != http.MethodPost || r.Path != "/api/routines/7/run" || r.Body != nil || !r.Write {
		t.Errorf("request = %+v", r)
	}
	sentence := "This routine is already running as execution 12. Wait for that run to finish, or cancel it, before starting another."
	cases := []struct {
		name   string
		err    *backend.ToolError
		wantID any
	}{
		{"headers", backend.NewError(backend.CodeConflict, sentence, map[string]any{"conflict": "routine_already_running", "execution_id": int64(12)}), int64(12)},
		{"sentence only", backend.NewError(backend.CodeConflict, sentence, nil), int64(12)},
		{"no id anywhere", backend.NewError(backend.CodeConflict, "This routine is already running. Wait for that run to finish, or cancel it, before starting another.",
			map[string]any{"conflict": "routine_already_running", "execution_id": nil}), nil},
	}
	for _, c := range cases {
		busy := newFakeAPI()
		busy.override = func(*backend.Request) (any, error, bool) { return nil, c.err, true }
		_, te := callTool(t, busy, "run_routine", map[string]any{"routine_id": 7})
		backendtest.WantErr(t, te, backend.CodeConflict, "already running")
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
	admission := backend.NewError(backend.CodeConflict, "resmon is already running as many executions as it allows at once. Wait for one to finish and try again.", nil)
	full := newFakeAPI()
	full.override = func(*backend.Request) (any, error, bool) { return nil, admission, true }
	_, te = callTool(t, full, "run_routine", map[string]any{"routine_id": 7})
	if te != admission {
		t.Errorf("admission conflict reshaped: %v", te)
	}

	for _, action := range []string{"activate", "deactivate"} {
		api.reset()
		out, te := callTool(t, api, action+"_routine", map[string]any{"routine_id": 4})
		backendtest.WantNoErr(t, te)
		r := api.requests()
		if len(r) != 1 || r[0].Method != http.MethodPost || r[0].Path != "/api/routines/4/"+action || r[0].Body != nil || r[0].Query != nil || !r[0].Write {
			t.Errorf("%s: %+v", action, r)
		}
		if ValMap(out)["is_active"] != (action == "activate") {
			t.Errorf("%s: not passed through: %v", action, out)
		}
		_, te = callTool(t, api, action+"_routine", map[string]any{"routine_id": true})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'routine_id' must be an integer (a whole number), not a boolean.")
	}
}

// get_routine's coverage: a backend that does not say whether the missed count is a floor
// leaves it unknown (null), never "exact"; a coverage answer without a summary is left off.
func TestGetRoutineCoverageNeverInventsExactness(t *testing.T) {
	routine := `{"id":2,"name":"r","schedule_cron":"0 7 * * 1","parameters":"{}","is_active":false,"missed_fires":{"count":0,"last_due_at_utc":null},"missed_fire_details":[]}`
	deliveries := `{"routine_id":2,"deliveries":[],"summary":{"targets":{},"enabled_target_count":0,"awaiting_review":0,"last":null}}`
	for _, tc := range []struct {
		name, coverage string
		want           any // the lower-bound value, or "absent" for no coverage key
	}{
		{"flag missing", `{"summary":"s","missed_in_corpus_total":63}`, nil},
		{"flag true", `{"summary":"s","missed_in_corpus_total":63,"missed_in_corpus_total_is_lower_bound":true}`, true},
		{"flag false", `{"summary":"s","missed_in_corpus_total":63,"missed_in_corpus_total_is_lower_bound":false}`, false},
		{"no summary", `{"unexpected":"shape"}`, "absent"},
	} {
		f := newFakeAPI()
		f.override = func(r *backend.Request) (any, error, bool) {
			switch r.Path {
			case "/api/routines/2":
				return decodeJSONText(routine), nil, true
			case "/api/routines/2/coverage":
				return decodeJSONText(tc.coverage), nil, true
			case "/api/routines/2/deliveries":
				return decodeJSONText(deliveries), nil, true
			}
			return nil, nil, false
		}
		out, err := toolGetRoutine(context.Background(), f, map[string]any{"routine_id": 2})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cov, has := out.(map[string]any)["coverage"]
		if tc.want == "absent" {
			if has {
				t.Errorf("%s: coverage = %v, want no key", tc.name, cov)
			}
			continue
		}
		if !has {
			t.Fatalf("%s: no coverage", tc.name)
		}
		if got := cov.(map[string]any)["missed_in_corpus_count_is_lower_bound"]; got != tc.want {
			t.Errorf("%s: lower bound = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRoutineToolsAgainstTheSimulator: every routines tool through the real HTTP client against an in-process simulator.
func TestRoutineToolsAgainstTheSimulator(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	t.Run("list_routines", func(t *testing.T) {
		out, te := callTool(t, api, "list_routines", map[string]any{"active_only": true})
		backendtest.WantNoErr(t, te)
		for _, r := range ValList(ValMap(out)["routines"]) {
			if ValMap(r)["active"] != true {
				t.Errorf("inactive routine listed: %v", r)
			}
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/routines", Status: 503, Count: 1})
		_, te = callTool(t, api, "list_routines", nil)
		backendtest.WantErr(t, te, backend.CodeUpstreamError, "")
	})
	t.Run("get_routine", func(t *testing.T) {
		out, te := callTool(t, api, "get_routine", map[string]any{"routine_id": 1})
		backendtest.WantNoErr(t, te)
		r := ValMap(out)
		d := ValMap(r["delivery"])
		if d == nil || d["enabled_target_count"] == nil || ValMap(d["targets_by_channel"]) == nil {
			t.Fatalf("delivery = %v", r["delivery"])
		}
		if ValMap(r["missed_fires"])["count"] == nil {
			t.Errorf("missed_fires = %v", r["missed_fires"])
		}
		text := mustJSON(t, out)
		for _, leak := range []string{"ada@example.org", "/home/resmon", "example.org/resmon-receiver", "target_snapshot"} {
			if strings.Contains(text, leak) {
				t.Errorf("get_routine leaked %q", leak)
			}
		}
		_, te = callTool(t, api, "get_routine", map[string]any{"routine_id": 9999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "Routine not found")
	})
	var routineID any
	t.Run("create_routine", func(t *testing.T) {
		out, te := callTool(t, api, "create_routine", map[string]any{"name": "Graphs weekly", "keywords": []any{"graph", "attention"},
			"sources": []any{"arxiv"}, "schedule": "0 7 * * 1", "intent": "Graph attention papers."})
		backendtest.WantNoErr(t, te)
		r := ValMap(ValMap(out)["routine"])
		if r["is_active"] != false || r["intent"] != "Graph attention papers." {
			t.Fatalf("created = %v", r)
		}
		routineID = r["id"]
		_, te = callTool(t, api, "create_routine", map[string]any{"name": "W", "keywords": []any{}, "sources": []any{"arxiv"},
			"schedule": "0 7 * * 1", "entity": map[string]any{"profile_id": 99999, "mode": "new_papers"}})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "")
	})
	t.Run("activate_deactivate_routine", func(t *testing.T) {
		out, te := callTool(t, api, "activate_routine", map[string]any{"routine_id": routineID})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["is_active"] != true {
			t.Errorf("activate = %v", out)
		}
		got, _ := callTool(t, api, "get_routine", map[string]any{"routine_id": routineID})
		if ValMap(got)["is_active"] != true {
			t.Errorf("not active after activate: %v", ValMap(got)["is_active"])
		}
		out, te = callTool(t, api, "deactivate_routine", map[string]any{"routine_id": routineID})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["is_active"] != false {
			t.Errorf("deactivate = %v", out)
		}
		_, te = callTool(t, api, "activate_routine", map[string]any{"routine_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "Routine not found")
		_, te = callTool(t, api, "deactivate_routine", map[string]any{"routine_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "Routine not found")
	})
	t.Run("run_routine", func(t *testing.T) {
		// RunDuration is an hour, so the first run is still running when the second arrives.
		out, te := callTool(t, api, "run_routine", map[string]any{"routine_id": routineID})
		backendtest.WantNoErr(t, te)
		first := ValMap(out)["execution_id"]
		if first == nil || ValMap(out)["was_inactive"] != true {
			t.Fatalf("run = %v", out)
		}
		_, te = callTool(t, api, "run_routine", map[string]any{"routine_id": routineID})
		backendtest.WantErr(t, te, backend.CodeConflict, "already running")
		if te.Detail["conflict"] != "routine_already_running" || fmt.Sprint(te.Detail["execution_id"]) != fmt.Sprint(first) {
			t.Errorf("conflict detail = %v, first run %v", te.Detail, first)
		}
		_, te = callTool(t, api, "run_routine", map[string]any{"routine_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "Routine not found")
	})
}
