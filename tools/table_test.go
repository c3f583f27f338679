package tools

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The tool table itself: a decided flag for every tool, the definition order, schema hygiene,
// and which requests are marked as writes.

const testCallTimeout = 10 * time.Second

// wantConfirmation is the decision for every tool. Adding a tool to the table without adding
// it here (and so deciding its flag) fails TestEveryToolHasADecidedFlag.
var wantConfirmation = map[string]bool{
	"health": false, "search_corpus": false, "find_similar": false, "list_sources": false,
	"list_routines": false, "get_routine": false, "list_executions": false, "get_execution": false,
	"get_execution_results": false, "get_search_record": false, "explain_match": false,
	"get_paper_lifecycle": false, "get_analytics": false, "get_watchdog_findings": false,
	"export_references": false, "list_watch_profiles": false, "get_watch_profile": false,
	"get_profile_matches": false,
	"run_sweep":           true, "create_routine": true, "create_watch_profile": true, "run_routine": true,
	"activate_routine": true, "deactivate_routine": true, "update_settings": true,
}

// toolArgs holds representative arguments for every tool.
var toolArgs = map[string]map[string]any{
	"health":                {},
	"search_corpus":         {"query": "diffusion"},
	"find_similar":          {"doc_id": 1},
	"list_sources":          {},
	"list_routines":         {},
	"get_routine":           {"routine_id": 1},
	"list_executions":       {},
	"get_execution":         {"exec_id": 1},
	"get_execution_results": {"exec_id": 1},
	"get_search_record":     {"exec_id": 1},
	"explain_match":         {"doc_id": 1},
	"get_paper_lifecycle":   {"doc_id": 1},
	"get_analytics":         {"view": "overview"},
	"get_watchdog_findings": {},
	"export_references":     {"exec_id": 1, "format": "bibtex"},
	"list_watch_profiles":   {},
	"get_watch_profile":     {"profile_id": 1},
	"get_profile_matches":   {"profile_id": 1},
	"run_sweep":             {"query": "diffusion", "sources": []any{"arxiv"}},
	"create_routine":        {"name": "Weekly", "keywords": []any{"quantum", "error"}, "sources": []any{"arxiv"}, "schedule": "0 7 * * 1"},
	"create_watch_profile":  {"name": "Ada Lovelace"},
	"run_routine":           {"routine_id": 1},
	"activate_routine":      {"routine_id": 1},
	"deactivate_routine":    {"routine_id": 1},
	"update_settings":       {"group": "ai", "settings": map[string]any{"ai_effort": "low"}},
}

func TestEveryToolHasADecidedFlag(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range Tools {
		if seen[tool.Name] {
			t.Errorf("tool %q appears twice", tool.Name)
		}
		seen[tool.Name] = true
		want, ok := wantConfirmation[tool.Name]
		if !ok {
			t.Errorf("tool %q has no decided requires_confirmation in wantConfirmation", tool.Name)
			continue
		}
		if tool.RequiresConfirmation != want {
			t.Errorf("%s: RequiresConfirmation = %v, want %v", tool.Name, tool.RequiresConfirmation, want)
		}
	}
	for name := range wantConfirmation {
		if !seen[name] {
			t.Errorf("decided tool %q is missing from the table", name)
		}
	}
	if len(Tools) != 25 {
		t.Errorf("len(Tools) = %d, want 25", len(Tools))
	}
	reads, writes := ReadTools(), WriteTools()
	if len(reads) != 18 || len(writes) != 7 {
		t.Errorf("reads=%d writes=%d, want 18 and 7", len(reads), len(writes))
	}
	// ReadTools must list only names the independent list above decides need no confirmation
	// (a filter that let a write through, or dropped a read, fails here).
	for _, r := range reads {
		if want, ok := wantConfirmation[r]; !ok || want {
			t.Errorf("ReadTools() lists %q, which is not a read", r)
		}
	}
	wantWrites := []string{"run_sweep", "create_routine", "create_watch_profile", "run_routine",
		"activate_routine", "deactivate_routine", "update_settings"}
	if !reflect.DeepEqual(writes, wantWrites) {
		t.Errorf("WriteTools() = %v, want %v (definition order)", writes, wantWrites)
	}
	for name := range toolArgs {
		if _, ok := ToolByName(name); !ok {
			t.Errorf("toolArgs names unknown tool %q", name)
		}
	}
	for _, tool := range Tools {
		if _, ok := toolArgs[tool.Name]; !ok {
			t.Errorf("toolArgs has no entry for %q", tool.Name)
		}
	}
	if _, ok := ToolByName("nope"); ok {
		t.Error("ToolByName found a tool that does not exist")
	}
}

func TestToolTableOrderAndSchemas(t *testing.T) {
	wantOrder := []string{"health", "search_corpus", "find_similar", "list_sources", "list_routines", "get_routine",
		"list_executions", "get_execution", "get_execution_results", "get_search_record", "explain_match",
		"get_paper_lifecycle", "get_analytics", "get_watchdog_findings", "export_references",
		"list_watch_profiles", "get_watch_profile", "get_profile_matches", "run_sweep", "create_routine",
		"create_watch_profile", "run_routine", "activate_routine", "deactivate_routine", "update_settings"}
	var got []string
	for _, tool := range Tools {
		got = append(got, tool.Name)
	}
	if !reflect.DeepEqual(got, wantOrder) {
		t.Fatalf("order = %v", got)
	}
	for _, tool := range Tools {
		if strings.TrimSpace(tool.Description) == "" || tool.Handler == nil {
			t.Errorf("%s: empty description or nil handler", tool.Name)
		}
		if tool.InputSchema["type"] != "object" {
			t.Errorf("%s: schema type %v", tool.Name, tool.InputSchema["type"])
		}
		if _, ok := tool.InputSchema["additionalProperties"]; ok {
			t.Errorf("%s: the schema keeps the reference's form (no additionalProperties); checkArguments refuses unknown arguments", tool.Name)
		}
		text, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatalf("%s: schema does not encode: %v", tool.Name, err)
		}
		for _, bad := range []string{"api_key", "credential_value"} {
			if strings.Contains(string(text), bad) {
				t.Errorf("%s: schema mentions %q", tool.Name, bad)
			}
		}
		hasExpect := strings.Contains(string(text), `"expected_runtime_id"`)
		if hasExpect != (tool.Name == "health" || tool.Name == "get_execution") {
			t.Errorf("%s: expected_runtime_id in schema = %v", tool.Name, hasExpect)
		}
		for _, word := range []string{"delete", "erase", "factory", "reset", "revoke", "uninstall"} {
			if strings.Contains(tool.Name, word) {
				t.Errorf("%s: tool name contains %q", tool.Name, word)
			}
		}
		if !tool.RequiresConfirmation && (tool.Destructive || tool.Idempotent || tool.OpenWorld) {
			t.Errorf("%s: a read carries write annotations", tool.Name)
		}
		// Every required key must be a declared property.
		req, _ := tool.InputSchema["required"].([]string)
		properties, _ := tool.InputSchema["properties"].(map[string]any)
		for _, k := range req {
			if _, ok := properties[k]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name, k)
			}
		}
	}
	health, _ := ToolByName("health")
	for _, word := range []string{"schema", "scheduler"} {
		if strings.Contains(strings.ToLower(health.Description), word) {
			t.Errorf("health description mentions %q", word)
		}
	}
	sweep, _ := ToolByName("run_sweep")
	if !strings.Contains(sweep.Description, "interrupted") {
		t.Error("run_sweep description must warn that a run may end interrupted")
	}
	matches, _ := ToolByName("get_profile_matches")
	if !strings.Contains(matches.Description, "basis") || !strings.Contains(matches.Description, "name_only") {
		t.Error("get_profile_matches description must explain basis")
	}
	for _, name := range []string{"run_sweep", "run_routine"} {
		if tool, _ := ToolByName(name); !tool.OpenWorld {
			t.Errorf("%s: OpenWorld must be set", name)
		}
	}
	if tool, _ := ToolByName("update_settings"); !tool.Destructive {
		t.Error("update_settings overwrites values: Destructive must be set")
	}
	// Every write's Destructive: TestWriteAnnotationsSayWhatEachWriteDoes (confirm_test.go).
	for _, name := range []string{"activate_routine", "deactivate_routine"} {
		if tool, _ := ToolByName(name); !tool.Idempotent {
			t.Errorf("%s: Idempotent must be set", name)
		}
	}
	analytics, _ := ToolByName("get_analytics")
	view := analytics.InputSchema["properties"].(map[string]any)["view"].(map[string]any)
	if want := []string{"discovery-lag", "keywords", "overview", "routine-health", "sources", "volume"}; !reflect.DeepEqual(view["enum"], want) {
		t.Errorf("view enum = %v, want %v", view["enum"], want)
	}
	settings, _ := ToolByName("update_settings")
	group := settings.InputSchema["properties"].(map[string]any)["group"].(map[string]any)
	if want := []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"}; !reflect.DeepEqual(group["enum"], want) {
		t.Errorf("group enum = %v", group["enum"])
	}
}

// Every write request is marked Write and every read request is not; reads use only GET or
// POST, and only search_corpus and export_references(doc_ids) POST.
func TestWriteFlagOnRequests(t *testing.T) {
	for _, tool := range Tools {
		t.Run(tool.Name, func(t *testing.T) {
			api := newFakeAPI()
			if _, te := callTool(t, api, tool.Name, toolArgs[tool.Name]); te != nil {
				t.Fatalf("representative call failed: %v", te)
			}
			reqs := api.requests()
			if len(reqs) == 0 {
				t.Fatal("no request made")
			}
			anyWrite := false
			for _, r := range reqs {
				anyWrite = anyWrite || r.Write
				if !tool.RequiresConfirmation {
					if r.Write {
						t.Errorf("read tool sent a Write request %s %s", r.Method, r.Path)
					}
					if r.Method != http.MethodGet && r.Method != http.MethodPost {
						t.Errorf("read tool used %s", r.Method)
					}
					if r.Method == http.MethodPost && tool.Name != "search_corpus" && tool.Name != "export_references" {
						t.Errorf("read tool %s POSTed %s", tool.Name, r.Path)
					}
				}
				if r.Write && r.Method == http.MethodGet {
					t.Errorf("GET %s marked Write", r.Path)
				}
			}
			if tool.RequiresConfirmation && !anyWrite {
				t.Error("write tool sent no Write request")
			}
		})
	}
}

// Every caveat the app's own server and the contract give a model before it calls a tool is in
// that tool's description (or the argument's), in our words. Each row names one caveat and the
// words that carry it.
func TestDescriptionsKeepEveryCaveat(t *testing.T) {
	caveats := []struct {
		tool, arg, why string
		words          []string
	}{
		{"get_search_record", "", "pre-1.8.6 runs have no zero reason; an unexplained zero is no evidence", []string{"before resmon 1.8.6", "not evidence that there was nothing to find"}},
		{"get_profile_matches", "", "name+affiliation and name_only are string matches, not identity", []string{"'name+affiliation' and 'name_only' are string matches", "NOT evidence"}},
		{"get_profile_matches", "", "a name-only match is never the person's paper", []string{"Never present a name_only match as the person's paper"}},
		{"get_watch_profile", "", "the per-basis counts are part of the answer", []string{"count per basis", "only name matches"}},
		{"get_watch_profile", "", "basis_warning says what every match can be", []string{"basis_warning", "what every match for it can ever be"}},
		{"list_watch_profiles", "", "basis_warning says what every match can be", []string{"basis_warning", "what every match for that profile can ever be"}},
		{"create_watch_profile", "", "only an ORCID makes a match evidence of identity", []string{"Only an ORCID makes a match evidence of identity"}},
		{"create_watch_profile", "orcid_cited", "an untraceable ORCID is an assertion", []string{"is an assertion"}},
		{"create_watch_profile", "aliases", "aliases check answers and are not sent", []string{"check a source's answers", "not sent to the source"}},
		{"create_watch_profile", "field_hints", "field hints tell people apart, never narrow", []string{"tell two people apart", "never to narrow the search"}},
		{"create_routine", "", "with entity the keywords are ignored, and why", []string{"keywords are ignored", "would hide the rest of their work"}},
		{"create_routine", "", "without intent the audit measures the query against itself", []string{"without it the coverage audit falls back to the keywords", "measures the query against itself"}},
		{"create_routine", "", "created inactive", []string{"created inactive"}},
		{"get_routine", "", "the coverage summary: furthest from intent, never returned", []string{"furthest from its intent", "never returned"}},
		{"get_watchdog_findings", "", "broken is recorded, unusual inferred", []string{"broken (a recorded fact)", "unusual (an inference"}},
		{"explain_match", "", "the caveats are part of the answer", []string{"The caveats are part of the answer"}},
		{"explain_match", "", "relevance ranking: matching no keyword is expected", []string{"rank by relevance", "expected, not a fault"}},
		{"activate_routine", "", "the person confirms it first", []string{"The person confirms this before it takes effect"}},
		{"update_settings", "", "no key, password or credential-shaped setting", []string{"cannot change an API key, a password or anything else credential-shaped"}},
		{"update_settings", "", "an unknown key is refused and lists the real keys", []string{"refused, not ignored", "the group's real keys"}},
		{"search_corpus", "mode", "semantic vs keyword, the embedding model, mode_unavailable", []string{"'keyword' filters on the words", "ranks by closeness in meaning", "needs an embedding model", "mode_unavailable"}},
		{"search_corpus", "", "the answer says which mode was served", []string{"says which one was served", "never present that order as relevance"}},
		{"find_similar", "", "an empty list carries its reason", []string{"An empty list always carries a reason"}},
		{"run_sweep", "", "returns at once; poll", []string{"Returns execution_id at once", "poll get_execution"}},
		{"run_routine", "", "returns at once; poll", []string{"Returns execution_id at once", "poll get_execution"}},
		{"get_execution_results", "", "ids are this corpus's", []string{"stored document id in this corpus"}},
		{"export_references", "", "BibTeX keys are not stable identifiers", []string{"not stable identifiers"}},
		{"health", "", "an expectation is not authentication, one call only", []string{"this one call only", "not authentication"}},
	}
	for _, c := range caveats {
		tool, ok := ToolByName(c.tool)
		if !ok {
			t.Fatalf("no tool %s", c.tool)
		}
		text := tool.Description
		if c.arg != "" {
			text, _ = propertiesOf(tool.InputSchema)[c.arg].(map[string]any)["description"].(string)
		}
		for _, w := range c.words {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s: the caveat %q is missing (%q)", c.tool, c.arg, c.why, w)
			}
		}
	}
	search, _ := ToolByName("search_corpus")
	if d := propertiesOf(search.InputSchema)["mode"].(map[string]any)["default"]; d != "keyword" {
		t.Errorf(`search_corpus mode default = %v, want "keyword"`, d)
	}
}

// Summary is the one line `resmongw tools` prints: present, at most 80 characters, one line.
func TestEveryToolHasAOneLineSummary(t *testing.T) {
	for _, tool := range Tools {
		if s := tool.Summary; s == "" || len([]rune(s)) > 80 || strings.ContainsAny(s, "\n\t") {
			t.Errorf("%s: summary %q", tool.Name, s)
		}
	}
}
