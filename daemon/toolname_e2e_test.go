package daemon_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// stateless2026 is the _meta a 2026-07-28 client puts on every request (no initialize).
const stateless2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"stateless","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// Tool names are matched exactly, as go-sdk decodes params: after a first call has gone
// through, a tools/call whose keys are cased otherwise ("Name", "Arguments") names no tool,
// is answered unknown tool, and sends nothing to resmon, on both protocol families (a
// second dispatcher that once served later calls matched keys case-insensitively and created
// the profile).
func TestWrongCasedCallIsUnknownAndSendsNothing(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"initialize", "2026-07-28"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sim := startSim(t)
			w.startDaemon()
			h := w.startRawHarness(simEnv(sim)...)
			meta := ""
			if family == "initialize" {
				send(t, h, testkit.InitializeRequest(`"init"`, "2025-06-18", "cased"))
				wait(t, h, `"init"`)
				send(t, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			} else {
				meta = `,"_meta":` + stateless2026
				send(t, h, `{"jsonrpc":"2.0","id":"discover","method":"server/discover","params":{"_meta":`+stateless2026+`}}`)
				if a := wait(t, h, `"discover"`); !strings.Contains(string(a), `"result"`) {
					t.Fatalf("server/discover: %s", a)
				}
			}
			send(t, h, `{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"health","arguments":{}`+meta+`}}`)
			if text, isError := toolText(t, wait(t, h, `"first"`)); isError {
				t.Fatalf("first call: %s", text)
			}
			before := len(sim.Requests())
			send(t, h, `{"jsonrpc":"2.0","id":"cased","method":"tools/call","params":{"Name":"create_watch_profile","Arguments":{"name":"X"}`+meta+`}}`)
			text, isError := toolText(t, wait(t, h, `"cased"`))
			if !isError || !strings.Contains(text, "Unknown tool") {
				t.Fatalf("the wrong-cased call answered isError %v %s; want unknown tool", isError, text)
			}
			// The answer comes after the handler ran: anything it sent is recorded by now. The
			// discovery watcher may verify the backend meanwhile (GET /api/health); nothing else
			// may reach it.
			for _, r := range sim.Requests()[before:] {
				if r.Method != "GET" || r.Path != "/api/health" {
					t.Fatalf("the wrong-cased call sent %s %s to resmon", r.Method, r.Path)
				}
			}
		})
	}
}

func send(t *testing.T, h *testkit.RawHarness, line string) {
	t.Helper()
	if err := h.Send(line); err != nil {
		t.Fatal(err)
	}
}

func wait(t *testing.T, h *testkit.RawHarness, id string) json.RawMessage {
	t.Helper()
	if err := h.WaitIDs(30*time.Second, id); err != nil {
		t.Fatal(err)
	}
	a, _ := h.Answer(id)
	return a
}

// toolText is a tools/call answer's one text item and isError.
func toolText(t *testing.T, answer json.RawMessage) (string, bool) {
	t.Helper()
	var a struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Result == nil || len(a.Result.Content) != 1 {
		t.Fatalf("not a tool result: %s", answer)
	}
	return a.Result.Content[0].Text, a.Result.IsError
}
