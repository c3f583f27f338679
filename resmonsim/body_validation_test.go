package resmonsim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Request bodies are validated as the app's FastAPI/pydantic v2 does: a wrongly typed field is
// a 422 whose detail lists each problem with pydantic's type, loc and msg, so a gateway that
// sends the wrong type cannot pass unseen.

// problem is one expected entry of a 422 detail list.
type problem struct {
	typ string
	loc string // the loc joined with "."
}

func TestWronglyTypedBodyFieldsAre422(t *testing.T) {
	s := startSim(t, Options{})
	cases := []struct {
		method, path string
		body         string
		want         []problem
	}{
		// The explorer search (ExplorerSearchBody): the cases.
		{"POST", "/api/explorer/search", `{"query":5}`, []problem{{"string_type", "body.query"}}},
		{"POST", "/api/explorer/search", `{"query":["protein"]}`, []problem{{"string_type", "body.query"}}},
		{"POST", "/api/explorer/search", `{"query":{"q":"x"}}`, []problem{{"string_type", "body.query"}}},
		{"POST", "/api/explorer/search", `{"query":"x","sources":"arxiv"}`, []problem{{"list_type", "body.sources"}}},
		{"POST", "/api/explorer/search", `{"query":"x","sources":["arxiv",3]}`, []problem{{"string_type", "body.sources.1"}}},
		{"POST", "/api/explorer/search", `{"query":"x","cursor":7}`, []problem{{"string_type", "body.cursor"}}},
		{"POST", "/api/explorer/search", `{"query":"x","cursor":["a"]}`, []problem{{"string_type", "body.cursor"}}},
		{"POST", "/api/explorer/search", `{"query":"x","date_from":2026}`, []problem{{"string_type", "body.date_from"}}},
		{"POST", "/api/explorer/search", `{"query":"x","date_from":["2026"]}`, []problem{{"string_type", "body.date_from"}}},
		{"POST", "/api/explorer/search", `{"query":"x","limit":"many"}`, []problem{{"int_parsing", "body.limit"}}},
		{"POST", "/api/explorer/search", `{"query":"x","limit":2.5}`, []problem{{"int_from_float", "body.limit"}}},
		{"POST", "/api/explorer/search", `{"query":"x","sort":1,"sources":null}`, []problem{{"list_type", "body.sources"}, {"string_type", "body.sort"}}},
		// The sweep (SweepRequest).
		{"POST", "/api/search/sweep", `{"query":"q","repositories":["arxiv"],"date_from":["2026"]}`, []problem{{"string_type", "body.date_from"}}},
		{"POST", "/api/search/sweep", `{"query":["q"],"repositories":"arxiv"}`, []problem{{"list_type", "body.repositories"}, {"string_type", "body.query"}}},
		{"POST", "/api/search/sweep", `{"query":"q","repositories":["arxiv"],"max_results":"lots","ai_enabled":"sometimes"}`, []problem{{"int_parsing", "body.max_results"}, {"bool_parsing", "body.ai_enabled"}}},
		{"POST", "/api/search/sweep", `{"query":"q","repositories":["arxiv"],"ai_enabled":[true]}`, []problem{{"bool_type", "body.ai_enabled"}}},
		{"POST", "/api/search/sweep", `{"query":"q"}`, []problem{{"missing", "body.repositories"}}},
		// Routines (RoutineCreate): the gateway's own examples of once-coerced arguments.
		{"POST", "/api/routines", `{"name":["x"],"schedule_cron":"0 8 * * 1","parameters":{}}`, []problem{{"string_type", "body.name"}}},
		{"POST", "/api/routines", `{"name":"x","schedule_cron":{"cron":"0 8 * * 1"},"parameters":{}}`, []problem{{"string_type", "body.schedule_cron"}}},
		{"POST", "/api/routines", `{"name":"x","schedule_cron":"0 8 * * 1","parameters":"{}"}`, []problem{{"dict_type", "body.parameters"}}},
		{"POST", "/api/routines", `{"name":"x","schedule_cron":"0 8 * * 1","parameters":{},"intent":3,"is_active":"maybe"}`, []problem{{"string_type", "body.intent"}, {"bool_parsing", "body.is_active"}}},
		// Watch profiles (WatchProfileBody).
		{"POST", "/api/profiles", `{"display_name":"Ada","affiliations":"AEG"}`, []problem{{"list_type", "body.affiliations"}}},
		{"POST", "/api/profiles", `{"display_name":"Ada","identifiers":["0000"]}`, []problem{{"dict_type", "body.identifiers"}}},
		{"POST", "/api/profiles", `{"display_name":7,"field_hints":[1]}`, []problem{{"string_type", "body.display_name"}, {"string_type", "body.field_hints.0"}}},
		// The export (document_ids: list[int]).
		{"POST", "/api/export/references", `{"document_ids":["x"],"format":"ris"}`, []problem{{"int_parsing", "body.document_ids.0"}}},
		{"POST", "/api/export/references", `{"document_ids":1}`, []problem{{"list_type", "body.document_ids"}}},
		{"POST", "/api/export/references", `{"format":["ris"]}`, []problem{{"string_type", "body.format"}}},
		// Settings and the rest.
		{"PUT", "/api/settings/ai", `{"settings":"ai_effort=low"}`, []problem{{"dict_type", "body.settings"}}},
		{"PUT", "/api/settings/execution", `{"max_concurrent_executions":"three","routine_fire_queue_limit":16}`, []problem{{"int_parsing", "body.max_concurrent_executions"}}},
		{"POST", "/api/watchdog/mute", `{"finding_key":""}`, []problem{{"string_too_short", "body.finding_key"}}},
		{"POST", "/api/watchdog/mute", `{"finding_key":"k","note":5}`, []problem{{"string_type", "body.note"}}},
	}
	for _, c := range cases {
		r := do(t, s, c.method, c.path, c.body)
		label := c.method + " " + c.path + " " + c.body
		if r.status != 422 {
			t.Errorf("%s: status %d, want 422 (%s)", label, r.status, r.body)
			continue
		}
		var body struct {
			Detail []map[string]json.RawMessage `json:"detail"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || len(body.Detail) != len(c.want) {
			t.Errorf("%s: detail %s, want %d problems", label, r.body, len(c.want))
			continue
		}
		for i, p := range c.want {
			d := body.Detail[i]
			var typ, msg string
			var loc []any
			_ = json.Unmarshal(d["type"], &typ)
			_ = json.Unmarshal(d["msg"], &msg)
			_ = json.Unmarshal(d["loc"], &loc)
			if typ != p.typ || joinLoc(loc) != p.loc || msg == "" || d["input"] == nil {
				t.Errorf("%s: problem %d = %s, want type %s at %s with msg and input", label, i, r.body, p.typ, p.loc)
			}
			if _, hasURL := d["url"]; hasURL {
				t.Errorf("%s: pydantic v2 under FastAPI sends no url: %s", label, r.body)
			}
		}
	}
}

func joinLoc(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// pydantic's lax mode still converts what it converts: numeric strings and integral floats
// for an int, 0/1 and "true"/"off" for a bool. Those pass.
func TestLaxCoercionsPydanticAcceptsStillPass(t *testing.T) {
	s := startSim(t, Options{})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/explorer/search", `{"query":"graph","limit":"5"}`},
		{"POST", "/api/explorer/search", `{"query":"graph","limit":5.0,"cursor":null,"date_from":null}`},
		{"POST", "/api/search/sweep", `{"query":"q","repositories":["arxiv"],"max_results":"10","ai_enabled":"off"}`},
		{"POST", "/api/search/sweep", `{"query":"q","repositories":[],"ai_enabled":1}`},
		{"POST", "/api/routines", `{"name":"x","schedule_cron":"0 8 * * 1","parameters":{},"is_active":0,"intent":null}`},
	} {
		r := do(t, s, c.method, c.path, c.body)
		if r.status >= 400 {
			t.Errorf("%s %s %s: %d %s", c.method, c.path, c.body, r.status, r.body)
		}
	}
}

// Every body field's problem is listed, in the model's field order, and the missing-field
// entry carries the whole body as its input, as FastAPI's does.
func TestEveryBodyProblemIsListedInFieldOrder(t *testing.T) {
	s := startSim(t, Options{})
	r := do(t, s, "POST", "/api/search/sweep", `{"query":1,"max_results":"x","ai_enabled":"?"}`)
	wantStatus(t, r, 422)
	wantBody(t, r, `{"detail":[{"type":"missing","loc":["body","repositories"],"msg":"Field required","input":{"query":1,"max_results":"x","ai_enabled":"?"}},`+
		`{"type":"string_type","loc":["body","query"],"msg":"Input should be a valid string","input":1},`+
		`{"type":"int_parsing","loc":["body","max_results"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"},`+
		`{"type":"bool_parsing","loc":["body","ai_enabled"],"msg":"Input should be a valid boolean, unable to interpret input","input":"?"}]}`)
}
