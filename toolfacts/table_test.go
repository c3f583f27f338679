package toolfacts

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The rows themselves: order, schema hygiene, annotations, caveats and summaries. Each row's
// handler is checked in the tools package (TestEveryRowHasExactlyOneHandler), its example
// arguments by a call of every tool (tools.TestWriteFlagOnRequests), and the contract's seven
// writes, written out, by packaging.TestApprovalsFollowTheToolTable.

// props is a schema's properties.
func props(schema map[string]any) map[string]any {
	p, _ := schema["properties"].(map[string]any)
	return p
}

func TestToolTableOrderAndSchemas(t *testing.T) {
	// The reads come first, then the writes (the contract's tables); every name once. The
	// names and their order on the wire are the conformance corpus's (mcpserver/testdata).
	seen := map[string]bool{}
	var names []string
	for _, tool := range Rows {
		if seen[tool.Name] {
			t.Errorf("tool %q appears twice", tool.Name)
		}
		seen[tool.Name] = true
		names = append(names, tool.Name)
	}
	if split := append(ReadTools(), WriteTools()...); !slices.Equal(names, split) {
		t.Errorf("order %v, want the reads %v then the writes %v", names, ReadTools(), WriteTools())
	}
	for _, tool := range Rows {
		if strings.TrimSpace(tool.Description) == "" || tool.Example == nil {
			t.Errorf("%s: empty description or no example arguments", tool.Name)
		}
		if tool.InputSchema["type"] != "object" {
			t.Errorf("%s: schema type %v", tool.Name, tool.InputSchema["type"])
		}
		if _, ok := tool.InputSchema["additionalProperties"]; ok {
			t.Errorf("%s: the schema keeps the reference's form (no additionalProperties); tools.CheckArguments refuses unknown arguments", tool.Name)
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
		if tool.RequiresConfirmation != (tool.Confirm != nil) {
			t.Errorf("%s: a write needs the words of its confirmation (Confirm), and only a write has them", tool.Name)
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
	health, _ := ByName("health")
	for _, word := range []string{"schema", "scheduler"} {
		if strings.Contains(strings.ToLower(health.Description), word) {
			t.Errorf("health description mentions %q", word)
		}
	}
	sweep, _ := ByName("run_sweep")
	if !strings.Contains(sweep.Description, "interrupted") {
		t.Error("run_sweep description must warn that a run may end interrupted")
	}
	matches, _ := ByName("get_profile_matches")
	if !strings.Contains(matches.Description, "basis") || !strings.Contains(matches.Description, "name_only") {
		t.Error("get_profile_matches description must explain basis")
	}
	for _, name := range []string{"run_sweep", "run_routine"} {
		if tool, _ := ByName(name); !tool.OpenWorld {
			t.Errorf("%s: OpenWorld must be set", name)
		}
	}
	if tool, _ := ByName("update_settings"); !tool.Destructive {
		t.Error("update_settings overwrites values: Destructive must be set")
	}
	// Every write's Destructive: TestWriteAnnotationsSayWhatEachWriteDoes (confirm_test.go).
	for _, name := range []string{"activate_routine", "deactivate_routine"} {
		if tool, _ := ByName(name); !tool.Idempotent {
			t.Errorf("%s: Idempotent must be set", name)
		}
	}
	analytics, _ := ByName("get_analytics")
	view := analytics.InputSchema["properties"].(map[string]any)["view"].(map[string]any)
	if want := []string{"discovery-lag", "keywords", "overview", "routine-health", "sources", "volume"}; !reflect.DeepEqual(view["enum"], want) {
		t.Errorf("view enum = %v, want %v", view["enum"], want)
	}
	settings, _ := ByName("update_settings")
	group := settings.InputSchema["properties"].(map[string]any)["group"].(map[string]any)
	if want := []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"}; !reflect.DeepEqual(group["enum"], want) {
		t.Errorf("group enum = %v", group["enum"])
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
		tool, ok := ByName(c.tool)
		if !ok {
			t.Fatalf("no tool %s", c.tool)
		}
		text := tool.Description
		if c.arg != "" {
			text, _ = props(tool.InputSchema)[c.arg].(map[string]any)["description"].(string)
		}
		for _, w := range c.words {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s: the caveat %q is missing (%q)", c.tool, c.arg, c.why, w)
			}
		}
	}
	search, _ := ByName("search_corpus")
	if d := props(search.InputSchema)["mode"].(map[string]any)["default"]; d != "keyword" {
		t.Errorf(`search_corpus mode default = %v, want "keyword"`, d)
	}
}

// Summary is the one line `resmongw tools` prints: present, at most 80 characters, one line.
func TestEveryToolHasAOneLineSummary(t *testing.T) {
	for _, tool := range Rows {
		if s := tool.Summary; s == "" || len([]rune(s)) > 80 || strings.ContainsAny(s, "\n\t") {
			t.Errorf("%s: summary %q", tool.Name, s)
		}
	}
}
