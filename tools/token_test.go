package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// The backend's token never reaches a tool's output, on any path.

// TestTokenNeverInOutput runs every tool, every route case and the error paths against the
// simulator and checks that its token appears in no payload and no error. The assertion is on
// the raw tool output, before the server's scrubber, so the scrubber cannot hide a leak.
func TestTokenNeverInOutput(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{})
	token := sim.Token()
	if len(token) < 32 {
		t.Fatalf("simulator token too short to be distinctive: %d", len(token))
	}
	check := func(label string, out any, te *backend.ToolError) {
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
			out, te := callTool(t, api, tool.Name, example(tool.Name))
			check(fmt.Sprintf("%s under %+v", tool.Name, f), out, te)
		}
		sim.ClearFaults()
	}
	// A restart rotates the token: every call is then refused with 401, and then nothing answers.
	if err := sim.Restart(resmonsim.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range Tools {
		out, te := callTool(t, api, tool.Name, example(tool.Name))
		if te == nil {
			t.Errorf("%s: answered with a stale token", tool.Name)
		}
		check(tool.Name+" after restart", out, te)
	}
	_ = sim.Stop()
	for _, tool := range Tools {
		out, te := callTool(t, api, tool.Name, example(tool.Name))
		check(tool.Name+" with the backend down", out, te)
	}
}
