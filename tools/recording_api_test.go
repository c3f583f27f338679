package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/resmongw/resmongw/backend"
)

// fakeAPI, the recording double every tool test runs against: plausible backend bodies, and
// every request kept for the test to inspect.

// fakeAPI is a recording double of API. It answers plausible backend bodies (decoded the way
// the real client decodes them: json.Number) from a small in-memory state, and records every
// request. override, when set, may answer a request first (return handled=false to fall through).
type fakeAPI struct {
	mu        sync.Mutex
	calls     []backend.Request
	runtimeID string
	settings  map[string]map[string]any
	override  func(r *backend.Request) (body any, err error, handled bool)
}

const fakeRuntimeID = "3f0c6a0e-8a0b-4e53-9d0f-2c5b1a7e9d41"

func newFakeAPI() *fakeAPI {
	return &fakeAPI{
		runtimeID: fakeRuntimeID,
		settings: map[string]map[string]any{
			"ai":            jsonObj(`{"ai_provider":"anthropic","ai_model":"m","ai_effort":"high","ai_show_audit_prefix":"true","ai_cli_path":""}`),
			"assistant":     jsonObj(`{"assistant_runtime":"claude_cli","assistant_provider":"","assistant_model":"","assistant_effort":"medium"}`),
			"email":         jsonObj(`{"smtp_server":"","smtp_port":"587","smtp_username":"","smtp_from":"","smtp_to":""}`),
			"embeddings":    jsonObj(`{"embedding_enabled":"false","embedding_provider":"local","embedding_model":"","embedding_endpoint":""}`),
			"cloud":         jsonObj(`{"cloud_provider":"","cloud_auto_backup":"false"}`),
			"storage":       jsonObj(`{"pdf_policy":"save","txt_policy":"save","archive_after_days":"30","export_directory":""}`),
			"notifications": jsonObj(`{"notify_manual":true,"notify_automatic_mode":"all"}`),
			"execution":     jsonObj(`{"max_concurrent_executions":3,"routine_fire_queue_limit":16}`),
		},
	}
}

// decodeJSONText decodes s as the client would (numbers as json.Number).
func decodeJSONText(s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(fmt.Sprintf("bad test JSON %q: %v", s, err))
	}
	return v
}

func jsonObj(s string) map[string]any { return decodeJSONText(s).(map[string]any) }

func (f *fakeAPI) requests() []backend.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]backend.Request(nil), f.calls...)
}

func (f *fakeAPI) reset() {
	f.mu.Lock()
	f.calls = nil
	f.mu.Unlock()
}

var (
	reRoutine      = regexp.MustCompile(`^/api/routines/(\d+)$`)
	reExecution    = regexp.MustCompile(`^/api/executions/(\d+)$`)
	reProfile      = regexp.MustCompile(`^/api/profiles/(\d+)$`)
	reSettingsPath = regexp.MustCompile(`^/api/settings/([a-z_]+)$`)
)

const fakePaper = `{"id":8,"source_repository":"semantic_scholar","external_id":"c:1","doi":"10.1/x","title":"Attention over sparse graphs",
"authors":"Ada Lovelace","abstract":"long abstract","publication_date":"2026-02-20","url":"https://example.org/p/8","categories":"cs.LG"}`

func (f *fakeAPI) Call(ctx context.Context, r *backend.Request) (any, error) {
	f.mu.Lock()
	cp := *r
	f.calls = append(f.calls, cp)
	f.mu.Unlock()
	if f.override != nil {
		if body, err, handled := f.override(r); handled {
			return body, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, backend.NewError(backend.CodeBackendUnavailable, "cancelled", nil)
	}
	return f.answer(r)
}

func (f *fakeAPI) identity() string {
	return fmt.Sprintf(`{"contract_version":1,"runtime_id":%q,"schema_version":21,"corpus_id":null,"build_id":null}`, f.runtimeID)
}

func (f *fakeAPI) answer(r *backend.Request) (any, error) {
	p := r.Path
	get := r.Method == http.MethodGet
	post := r.Method == http.MethodPost
	switch {
	case get && p == "/api/health":
		return decodeJSONText(`{"status":"ok","version":"2.3.0","pid":1,"identity":` + f.identity() + `}`), nil
	case post && p == "/api/explorer/search":
		sort := ValMap(r.Body)["sort"]
		extra := ""
		if sort == "similarity" {
			extra = `,"ranked_count":1,"unranked_count":0,"model":"mini"`
		}
		row := strings.Replace(fakePaper, `"id":8`, `"id":8,"distance":0.12`, 1)
		return decodeJSONText(fmt.Sprintf(`{"results":[%s],"next_cursor":"2026-02-20|8","has_more":true,"total":137,
"total_is_capped":false,"sort":%q%s}`, row, sort, extra)), nil
	case get && strings.HasSuffix(p, "/similar"):
		return decodeJSONText(`{"document_id":1,"model":"mini","neighbours":[` +
			strings.Replace(fakePaper, `"id":8`, `"id":8,"distance":0.01`, 1) + `],"reason":null}`), nil
	case get && p == "/api/repositories/catalog":
		return decodeJSONText(`[{"slug":"arxiv","name":"arXiv","subject_coverage":"Physics","api_key_requirement":"none","credential_name":null,
"attribution":"Thanks arXiv","attribution_requirement":"requested"},
{"slug":"core","name":"CORE","subject_coverage":"All","api_key_requirement":"required","credential_name":"core_api_key",
"attribution":"","attribution_requirement":"none"}]`), nil
	case get && p == "/api/credentials":
		return decodeJSONText(`{"keyring_responsive":true,"credentials":{"core_api_key":{"present":true,"status":"present","value":"sk-must-not-appear"}}}`), nil
	case get && p == "/api/routines":
		return decodeJSONText(`[{"id":1,"name":"Turbulence","schedule_cron":"0 7 * * 1","parameters":"{\"query\": \"diffusion turbulence\", \"repositories\": [\"arxiv\"]}",
"is_active":1,"last_executed_at":null,"last_status":null,"missed_fires":{"count":2,"last_due_at_utc":"2026-09-19T07:00:00+00:00"}},
{"id":2,"name":"Idle","schedule_cron":"0 8 * * *","parameters":"{\"keywords\": [\"a\", \"b\"], \"repositories\": [\"openalex\"]}",
"is_active":0,"last_executed_at":"2026-09-01 08:00:00","last_status":"completed","missed_fires":{"count":0,"last_due_at_utc":null}}]`), nil
	case get && reRoutine.MatchString(p):
		return decodeJSONText(`{"id":` + reRoutine.FindStringSubmatch(p)[1] + `,"name":"Turbulence","schedule_cron":"0 7 * * 1","parameters":"{}","is_active":false,
"missed_fires":{"count":2,"last_due_at_utc":"2026-09-19T07:00:00+00:00"},"missed_fire_details":[]}`), nil
	case get && strings.HasSuffix(p, "/coverage") && strings.HasPrefix(p, "/api/routines/"):
		return decodeJSONText(`{"summary":"s","intent":"i","intent_source":"intent","results":40,"results_embedded":38,
"off_target_total":312,"off_target":[1,2],"missed_in_corpus_total":63,"missed_in_corpus_total_is_lower_bound":true,"missed_in_corpus":[3],
"reason":null,"cannot_see":["x"]}`), nil
	case get && strings.HasSuffix(p, "/deliveries"):
		return decodeJSONText(`{"routine_id":1,"deliveries":[{"id":3,"target_snapshot":"https://hooks.example.org/secret-path","channel":"webhook"}],
"summary":{"targets":{"email":1,"webhook":2},"enabled_target_count":3,"awaiting_review":1,
"last":{"id":3,"execution_id":1,"channel":"email","state":"failed","attempts":2,
"last_error":"SMTP refused jane@example.org; wrote /home/jane/reports/out.md; posted https://hooks.example.org/x","delivered_at_utc":null}}}`), nil
	case get && p == "/api/executions":
		var rows []string
		for i := 30; i >= 1; i-- {
			status, rid := "completed", "null"
			if i%3 == 0 {
				status = "interrupted"
			}
			if i%2 == 0 {
				rid = "4"
			}
			rows = append(rows, fmt.Sprintf(`{"id":%d,"execution_type":"deep_sweep","routine_id":%s,"status":%q,"start_time":"t%d","end_time":null,
"result_count":%d,"interrupted_reason":"owner_dead","restarted_from":null,"parameters":"{}","coverage":{}}`, i, rid, status, i, i))
		}
		return decodeJSONText("[" + strings.Join(rows, ",") + "]"), nil
	case get && reExecution.MatchString(p):
		return decodeJSONText(`{"id":` + reExecution.FindStringSubmatch(p)[1] + `,"status":"completed","identity":` + f.identity() + `}`), nil
	case get && strings.HasSuffix(p, "/references"):
		if r.Query.Get("format") == "json" {
			var rows []string
			for i := 1; i <= 60; i++ {
				rows = append(rows, fmt.Sprintf(`{"title":"T%d","authors":"A","publication_date":"2026","doi":null,"url":null,"source_repository":"arxiv","external_id":"e","categories":"","abstract":"x","id":%d}`, i, i))
			}
			return "[\n" + strings.Join(rows, ",\n") + "\n]", nil // a file body, handed over as text
		}
		return "@misc{lovelace2026attention,\n  title = {Attention}\n}\n", nil
	case get && strings.HasSuffix(p, "/search-record"):
		return decodeJSONText(`{"record_type":"resmon_search_record","caveats":["c1","c2","c3"]}`), nil
	case get && strings.HasSuffix(p, "/why"):
		return decodeJSONText(`{"verdict":"local_evidence","what_resmon_cannot_see":["full text"]}`), nil
	case get && strings.HasSuffix(p, "/lifecycle"):
		return decodeJSONText(`{"document_id":7,"events":[],"checked_at":null,"check_status":null}`), nil
	case get && strings.HasPrefix(p, "/api/analytics/"):
		// Each view's own key, so every view's reply has the shape the tool checks.
		return map[string]any{"served": p, "summary": map[string]any{}, "series": []any{}, "sources": []any{},
			"keywords": []any{}, "routines": []any{}}, nil
	case get && p == "/api/watchdog":
		return decodeJSONText(`{"findings":[],"not_enough_data":[{"reason":"1 run"}],"thresholds":{"consecutive_errors":3}}`), nil
	case post && p == "/api/export/references":
		return "TY  - JOUR\nER  - \n", nil
	case get && p == "/api/profiles":
		return decodeJSONText(`{"profiles":[{"id":1,"kind":"person","display_name":"Ada Lovelace","names":[{"value":"Ada Lovelace","script":"latin"},{"value":"A. Lovelace","script":"latin"}],
"identifiers":{"orcid":{"value":"0000-0002-1825-0097","cited":"x"},"openalex":"A1"},"affiliations":["AEG"],"basis_warning":null},
{"id":2,"kind":"group","display_name":"B","names":[{"value":"B"}],"identifiers":{},"affiliations":null,"basis_warning":"name only"}]}`), nil
	case get && reProfile.MatchString(p):
		return decodeJSONText(`{"id":1,"kind":"person","display_name":"Ada Lovelace","basis_warning":null}`), nil
	case get && strings.HasSuffix(p, "/matches"):
		return decodeJSONText(`{"matches":[{"document_id":5,"basis":"name_only","matched_author":"A. Lovelace","evidence":"{\"author\": \"A. Lovelace\"}",
"first_seen_at":"2026-02-01 05:37:00","title":"T","source_repository":"arxiv","doi":null,"url":null,"publication_date":"2026"}],"total":9,"by_basis":{"name_only":9}}`), nil
	case post && p == "/api/profiles":
		warning := `"This profile has neither an identifier nor an affiliation, so every match will be name-only."`
		if ids := ValMap(ValMap(r.Body)["identifiers"]); len(ids) > 0 {
			warning = "null"
		}
		return decodeJSONText(`{"id":3,"kind":"person","display_name":"X","basis_warning":` + warning + `}`), nil
	case post && p == "/api/search/sweep":
		return decodeJSONText(`{"execution_id":42}`), nil
	case post && p == "/api/routines":
		return decodeJSONText(`{"id":7,"name":"Quantum EC weekly"}`), nil
	case post && strings.HasSuffix(p, "/run"):
		return decodeJSONText(`{"execution_id":43,"routine_id":7,"was_inactive":true,"detail":"This routine is not scheduled; it was run once because you asked for it."}`), nil
	case post && strings.HasSuffix(p, "/activate"):
		return decodeJSONText(`{"id":7,"is_active":true}`), nil
	case post && strings.HasSuffix(p, "/deactivate"):
		return decodeJSONText(`{"id":7,"is_active":false}`), nil
	case reSettingsPath.MatchString(p):
		return f.settingsCall(r, reSettingsPath.FindStringSubmatch(p)[1])
	}
	return nil, backend.NewError(backend.CodeNotFound, "Not Found", nil)
}

// settingsCall imitates the settings routes, including the backend's storage quirks: generic
// groups store str(value) (so a JSON true becomes "True") and notifications stores Python
// truthiness (so the string "false" becomes true).
func (f *fakeAPI) settingsCall(r *backend.Request, group string) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.settings[group]
	if !ok {
		return nil, backend.NewError(backend.CodeNotFound, "Not Found", nil)
	}
	switch r.Method {
	case http.MethodGet:
		cp := map[string]any{}
		for k, v := range cur {
			cp[k] = v
		}
		if group == "embeddings" {
			return map[string]any{"settings": cp, "capability": map[string]any{"available": true}}, nil
		}
		return cp, nil
	case http.MethodPut:
		for k, v := range ValMap(ValMap(r.Body)["settings"]) {
			if _, known := cur[k]; !known {
				continue // the backend silently ignores keys outside the group
			}
			if _, isBool := cur[k].(bool); isBool {
				cur[k] = pyTruthy(v)
				continue
			}
			switch x := v.(type) {
			case bool:
				cur[k] = map[bool]string{true: "True", false: "False"}[x]
			default:
				cur[k] = fmt.Sprint(x)
			}
		}
		return map[string]any{"success": true}, nil
	}
	return nil, backend.NewError(backend.CodeInternalError, "Method Not Allowed", nil)
}

// callTool runs a tool by name and returns its payload or *ToolError, failing the test on a
// non-ToolError error (that would surface as internal_error).
func callTool(t *testing.T, api backend.API, name string, args map[string]any) (any, *backend.ToolError) {
	t.Helper()
	tool, ok := ToolByName(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testCallTimeout)
	defer cancel()
	out, err := tool.Run(ctx, api, args)
	if err != nil {
		te := asToolError(err)
		if te == nil {
			t.Fatalf("%s: non-ToolError error %T: %v", name, err, err)
		}
		if out != nil {
			t.Fatalf("%s: returned both a payload and an error", name)
		}
		return nil, te
	}
	return out, nil
}

// mustJSON renders a payload as the server would put it on the wire.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("payload does not encode: %v", err)
	}
	return buf.String()
}
