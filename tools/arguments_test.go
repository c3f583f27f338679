package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
)

// Every argument of every tool is checked against the tool's own input schema before any
// request is built. The cases below are generated from the table's schemas, so a property added
// to a row is covered without touching this file.

// jsonKinds holds one value of each JSON type (null is "absent", never a wrong type).
var jsonKinds = map[string]any{
	"string":  "protein",
	"number":  json.Number("1.5"),
	"boolean": true,
	"array":   []any{"arxiv"},
	"object":  map[string]any{"cron": "0 8 * * 1"},
}

// admits reports whether a property of schema type typ takes a value of JSON kind. An integer
// takes no value of jsonKinds: its "number" is the fraction 1.5, the wrong kind of number.
func admits(typ, kind string) bool {
	return typ == kind
}

// argCase is one refused call: the arguments, and the argument path the refusal must name.
type argCase struct {
	tool, path, expected string
	args                 map[string]any
}

// withArg copies base and sets key to v.
func withArg(base map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(base)+1)
	for k, x := range base {
		out[k] = x
	}
	out[key] = v
	return out
}

// validEntity is a well-formed create_routine entity, for the nested cases.
var validEntity = map[string]any{"profile_id": json.Number("1"), "mode": "new_papers"}

// wrongTypeCases generates, for every property of every tool (and every property of an object
// property, and every array's items), one call per JSON type the schema does not admit.
func wrongTypeCases() []argCase {
	var cases []argCase
	for _, tool := range Tools {
		base := example(tool.Name)
		props := propertiesOf(tool.InputSchema)
		for _, name := range sortedKeys(props) {
			prop := props[name].(map[string]any)
			typ, _ := prop["type"].(string)
			for _, kind := range wrongKinds(typ) {
				cases = append(cases, argCase{tool.Name, name, typ, withArg(base, name, jsonKinds[kind])})
			}
			if items, ok := prop["items"].(map[string]any); ok {
				it, _ := items["type"].(string)
				for _, kind := range wrongKinds(it) {
					cases = append(cases, argCase{tool.Name, name + "[1]", it,
						withArg(base, name, []any{validItem(it), jsonKinds[kind]})})
				}
			}
			inner := propertiesOf(prop)
			for _, in := range sortedKeys(inner) {
				ityp, _ := inner[in].(map[string]any)["type"].(string)
				for _, kind := range wrongKinds(ityp) {
					cases = append(cases, argCase{tool.Name, name + "." + in, ityp,
						withArg(base, name, withArg(validEntity, in, jsonKinds[kind]))})
				}
			}
		}
	}
	return cases
}

// wrongKinds lists, in name order, the JSON kinds a property of schema type typ does not take.
func wrongKinds(typ string) []string {
	var out []string
	for _, kind := range sortedKeys(jsonKinds) {
		if !admits(typ, kind) {
			out = append(out, kind)
		}
	}
	return out
}

func validItem(typ string) any {
	if typ == "integer" {
		return json.Number("3")
	}
	return "arxiv"
}

// typeWord is what a refusal must say about the expected type.
func typeWord(typ string) string {
	if typ == "integer" {
		return "whole number"
	}
	return typ
}

// The examples, each of which used to become an empty value and go through.
var coercedBefore = []argCase{
	{"run_sweep", "query", "string", map[string]any{"query": []any{"protein"}, "sources": []any{"arxiv"}}},
	{"create_routine", "name", "string", map[string]any{"name": []any{"x"}, "keywords": []any{"k"}, "sources": []any{"arxiv"}, "schedule": "0 8 * * 1"}},
	{"create_routine", "schedule", "string", map[string]any{"name": "x", "keywords": []any{"k"}, "sources": []any{"arxiv"}, "schedule": map[string]any{"cron": "0 8 * * 1"}}},
	{"create_watch_profile", "orcid", "string", map[string]any{"name": "Rosalind Franklin", "orcid": []any{"0000-0002-1825-0097"}}},
	{"list_executions", "status", "string", map[string]any{"status": []any{"completed"}}},
	{"list_watch_profiles", "kind", "string", map[string]any{"kind": []any{"person"}}},
	{"run_sweep", "sources", "array", map[string]any{"query": "protein", "sources": "arxiv"}},
	{"run_sweep", "ai_enabled", "boolean", map[string]any{"query": "protein", "sources": []any{"arxiv"}, "ai_enabled": "false"}},
	{"get_routine", "routine_id", "integer", map[string]any{"routine_id": "4"}},
}

func TestWrongTypedArgumentsNeverReachTheBackend(t *testing.T) {
	cases := append(wrongTypeCases(), coercedBefore...)
	perTool := map[string]int{}
	for _, c := range cases {
		perTool[c.tool]++
		api := newFakeAPI()
		_, te := callTool(t, api, c.tool, c.args)
		label := fmt.Sprintf("%s %s=%s", c.tool, c.path, mustJSON(t, argAt(c.args, c.path)))
		if te == nil || te.Code != backend.CodeInvalidArgument {
			t.Errorf("%s: got %v, want invalid_argument", label, te)
			continue
		}
		if !strings.Contains(te.Message, "'"+c.path+"'") || !strings.Contains(te.Message, typeWord(c.expected)) {
			t.Errorf("%s: message %q does not name the argument and the type %s", label, te.Message, c.expected)
		}
		if te.Detail["argument"] != c.path {
			t.Errorf("%s: detail.argument = %v", label, te.Detail["argument"])
		}
		if n := len(api.requests()); n != 0 {
			t.Errorf("%s: %d request(s) reached the backend", label, n)
		}
	}
	// Every tool with arguments is covered (health's only one is expected_runtime_id).
	for _, tool := range Tools {
		if len(propertiesOf(tool.InputSchema)) > 0 && perTool[tool.Name] == 0 {
			t.Errorf("%s: no wrong-type case generated", tool.Name)
		}
	}
	if testing.Verbose() {
		t.Logf("%d refused calls over %d tools", len(cases), len(perTool))
	}
}

// argAt returns the (possibly nested) value a case put at path, for a readable failure.
func argAt(args map[string]any, path string) any {
	name, rest, nested := strings.Cut(path, ".")
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	v := args[name]
	if nested {
		return ValMap(v)[rest]
	}
	return v
}

func propertiesOf(schema map[string]any) map[string]any {
	p, _ := schema["properties"].(map[string]any)
	return p
}

// An integer argument beyond what resmon can store says so; a fraction is "not a whole
// number". Neither reaches the backend.
func TestIntegersOutsideTheBackendsRangeSaySo(t *testing.T) {
	for _, tool := range Tools {
		for name, p := range propertiesOf(tool.InputSchema) {
			if p.(map[string]any)["type"] != "integer" {
				continue
			}
			for _, v := range []any{json.Number("1e20"), json.Number("9223372036854775808"), json.Number("-1e30"), json.Number("1e400"), 1e20} {
				api := newFakeAPI()
				_, te := callTool(t, api, tool.Name, withArg(example(tool.Name), name, v))
				backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'"+name+"' is outside what resmon can store")
				if len(api.requests()) != 0 {
					t.Errorf("%s %s=%v: request sent", tool.Name, name, v)
				}
			}
			api := newFakeAPI()
			_, te := callTool(t, api, tool.Name, withArg(example(tool.Name), name, json.Number("2.5")))
			backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'"+name+"' must be a whole number, not 2.5.")
		}
	}
}

// minimum and maximum are the schema's, and both ends are refused outside, taken inside.
func TestIntegerBoundsComeFromTheSchema(t *testing.T) {
	checked := 0
	for _, tool := range Tools {
		for name, p := range propertiesOf(tool.InputSchema) {
			prop := p.(map[string]any)
			for _, bound := range []string{"minimum", "maximum"} {
				b, ok := schemaInt(prop[bound])
				if !ok {
					continue
				}
				checked++
				outside, word := b-1, "at least"
				if bound == "maximum" {
					outside, word = b+1, "at most"
				}
				api := newFakeAPI()
				_, te := callTool(t, api, tool.Name, withArg(example(tool.Name), name, outside))
				backendtest.WantErr(t, te, backend.CodeInvalidArgument, fmt.Sprintf("'%s' must be %s %d (got %d).", name, word, b, outside))
				if len(api.requests()) != 0 {
					t.Errorf("%s %s=%d: request sent", tool.Name, name, outside)
				}
				if _, te := callTool(t, newFakeAPI(), tool.Name, withArg(example(tool.Name), name, b)); te != nil {
					t.Errorf("%s %s=%d (the bound itself) refused: %v", tool.Name, name, b, te)
				}
			}
		}
	}
	// limit and offset on every paged tool, plus run_sweep's max_results.
	if checked < 10 {
		t.Errorf("only %d bounds checked", checked)
	}
	sweep, _ := ToolByName("run_sweep")
	if lo, _ := schemaInt(propertiesOf(sweep.InputSchema)["max_results"].(map[string]any)["minimum"]); lo != 1 {
		t.Errorf("max_results minimum = %d, want 1 (0 or less is refused, not sent as 50)", lo)
	}
}

// An enum takes exactly the values its schema lists: each one reaches the backend; the same
// word in another case or with spaces is refused, as is anything else.
func TestEnumsAreTakenExactlyAsListed(t *testing.T) {
	for _, tool := range Tools {
		props := propertiesOf(tool.InputSchema)
		for _, name := range sortedKeys(props) {
			allowed := schemaStrings(props[name].(map[string]any)["enum"])
			for _, v := range allowed {
				args := withArg(example(tool.Name), name, v)
				if tool.Name == "update_settings" {
					args["settings"] = map[string]any{settingsProbeKey[v]: "x"}
				}
				api := newFakeAPI()
				if _, te := callTool(t, api, tool.Name, args); te != nil && te.Code == backend.CodeInvalidArgument && te.Detail["argument"] == name {
					t.Errorf("%s %s=%q refused: %v", tool.Name, name, v, te)
				}
				for _, near := range []string{strings.ToUpper(v[:1]) + v[1:], " " + v, v + " "} {
					api := newFakeAPI()
					_, te := callTool(t, api, tool.Name, withArg(example(tool.Name), name, near))
					if te == nil || te.Code != backend.CodeInvalidArgument || te.Detail["argument"] != name || len(api.requests()) != 0 {
						t.Errorf("%s %s=%q: got %v with %d requests, want a refusal", tool.Name, name, near, te, len(api.requests()))
					}
				}
			}
		}
	}
	// The reference's own sentences are kept where it has one.
	for _, c := range []struct {
		tool, arg, value, want string
	}{
		{"search_corpus", "mode", "Semantic", "Unknown mode 'Semantic'. Use 'keyword' or 'semantic'."},
		{"get_analytics", "view", "Volume", "Unknown view 'Volume'. Expected one of: discovery-lag, keywords, overview, routine-health, sources, volume."},
		{"update_settings", "group", " ai ", "' ai ' is not a settings group this tool can change. Allowed: ai, assistant, email, embeddings, cloud, storage, notifications."},
		{"list_watch_profiles", "kind", "persn", "Unknown kind 'persn'. Use one of: person, institution, group."},
		{"export_references", "format", "docx", "Unknown format 'docx'. Use one of: bibtex, ris, csv, json."},
		{"list_executions", "status", "complete", "Unknown status 'complete'. Use one of: running, completed, failed, cancelled, interrupted."},
	} {
		_, te := callTool(t, newFakeAPI(), c.tool, withArg(example(c.tool), c.arg, c.value))
		if te == nil || te.Message != c.want {
			t.Errorf("%s %s=%q: got %v, want %q", c.tool, c.arg, c.value, te, c.want)
		}
	}
}

// settingsProbeKey is a real key of each settings group, so the enum case reaches the PUT.
var settingsProbeKey = map[string]string{
	"ai": "ai_effort", "assistant": "assistant_effort", "email": "smtp_port", "embeddings": "embedding_model",
	"cloud": "cloud_provider", "storage": "pdf_policy", "notifications": "notify_automatic_mode",
}

// Every required argument of every tool is required: missing, null and "" are refused with the
// reference's sentence and no request.
func TestRequiredArgumentsComeFromTheSchema(t *testing.T) {
	for _, tool := range Tools {
		req, _ := tool.InputSchema["required"].([]string)
		sort.Strings(req)
		for _, name := range req {
			for _, absent := range []any{"missing", nil, ""} {
				args := withArg(example(tool.Name), name, absent)
				if absent == "missing" {
					delete(args, name)
				}
				want := "'" + name + "' is required."
				if tool.Name == "update_settings" && name == "settings" {
					want = "'settings' must be a non-empty object." // the reference's sentence
				}
				api := newFakeAPI()
				_, te := callTool(t, api, tool.Name, args)
				if te == nil || te.Message != want || len(api.requests()) != 0 {
					t.Errorf("%s without %s (%#v): got %v, %d requests", tool.Name, name, absent, te, len(api.requests()))
				}
			}
		}
	}
}
