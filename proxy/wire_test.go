package proxy

import (
	"encoding/json"
	"strings"
	"testing"
)

// coreToolObjects parses a raw tools/list response line into its tool objects, keeping key order
// visible via the raw bytes.
func coreToolObjects(t *testing.T, m map[string]json.RawMessage) []json.RawMessage {
	t.Helper()
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		t.Fatalf("%v: %s", err, m["result"])
	}
	return res.Tools
}

func coreCheckToolList(t *testing.T, tools []Tool, objs []json.RawMessage) {
	t.Helper()
	if len(objs) != len(tools) {
		t.Fatalf("%d tools on the wire, table has %d", len(objs), len(tools))
	}
	for i, raw := range objs {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		if obj["name"] != tools[i].Name {
			t.Fatalf("position %d: %v, want %s (table order)", i, obj["name"], tools[i].Name)
		}
		rc, ok := obj["requires_confirmation"].(bool)
		if !ok || rc != tools[i].RequiresConfirmation {
			t.Fatalf("%s: requires_confirmation %v (%T)", tools[i].Name, obj["requires_confirmation"], obj["requires_confirmation"])
		}
		schema, _ := obj["inputSchema"].(map[string]any)
		if schema["type"] != "object" || obj["description"] != tools[i].Description {
			t.Fatalf("%s: %s", tools[i].Name, raw)
		}
		if _, ok := obj["_meta"]; ok {
			t.Fatalf("%s: unexpected _meta", tools[i].Name)
		}
	}
}

func TestWireAddsRequiresConfirmation(t *testing.T) {
	tools := coreTools()
	p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
	init := p.initialize("2025-06-18")
	var ir struct {
		ProtocolVersion string            `json:"protocolVersion"`
		ServerInfo      map[string]string `json:"serverInfo"`
		Capabilities    map[string]any    `json:"capabilities"`
	}
	if err := json.Unmarshal(init["result"], &ir); err != nil {
		t.Fatal(err)
	}
	if ir.ProtocolVersion != "2025-06-18" || ir.ServerInfo["name"] != "resmon" || ir.ServerInfo["version"] != "2.3" {
		t.Fatalf("%s", init["result"])
	}
	if caps, _ := json.Marshal(ir.Capabilities); string(caps) != `{"tools":{}}` {
		t.Fatalf("capabilities %s", caps)
	}

	// String and numeric ids, twice each: every tools/list response is rewritten.
	for _, id := range []string{`2`, `"list-a"`, `3`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`)
		line, m := p.recv()
		if string(m["id"]) != id {
			t.Fatalf("id %s, want %s", m["id"], id)
		}
		coreCheckToolList(t, tools, coreToolObjects(t, m))
		if strings.Count(line, `"requires_confirmation"`) != len(tools) {
			t.Fatalf("%s", line)
		}
	}

	// A tools/call response is not touched: no requires_confirmation, isError only on errors.
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bibtex"}}`)
	line, m := p.recv()
	if strings.Contains(line, "requires_confirmation") || strings.Contains(line, "structuredContent") {
		t.Fatalf("%s", line)
	}
	var res struct {
		Content []map[string]any `json:"content"`
		IsError *bool            `json:"isError"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 || res.Content[0]["type"] != "text" {
		t.Fatalf("%s", line)
	}
	if res.IsError != nil && *res.IsError {
		t.Fatalf("%s", line)
	}

	// Unknown tools and non-object arguments answer with isError results, not protocol errors.
	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	line, m = p.recv()
	if _, isErr := m["error"]; isErr || !strings.Contains(line, `"isError":true`) || !strings.Contains(line, `Unknown tool 'nope'.`) {
		t.Fatalf("%s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"zeta_echo","arguments":[1,2]}}`)
	line, _ = p.recv()
	if !strings.Contains(line, `"isError":true`) || !strings.Contains(line, `Tool arguments must be a JSON object.`) {
		t.Fatalf("%s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zeta_echo","arguments":null}}`)
	line, _ = p.recv()
	if strings.Contains(line, `"isError":true`) || !strings.Contains(line, `{\"args\":{},\"types\":{}}`) {
		t.Fatalf("%s", line)
	}
}

func TestWireWithThePackageTable(t *testing.T) {
	if len(Tools) == 0 {
		t.Skip("the tool table is empty")
	}
	p := coreRawServe(t, NewServer(nil, nil), Tools)
	p.initialize("2025-11-25")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	_, m := p.recv()
	coreCheckToolList(t, Tools, coreToolObjects(t, m))
}

func TestAddConfirmationKeepsBytes(t *testing.T) {
	flags := map[string]bool{"a": false, "b": true}
	order := map[string]int{"a": 0, "b": 1}
	in := `{"_meta":{"k":[1,{"tools":[]}]},"tools":[{"name":"x"},{"name":"b","inputSchema":{"type":"object"}},{},{"description":"d \u00e9 }","name":"a"}],"nextCursor":"c"}`
	out, err := addConfirmation(json.RawMessage(in), flags, order)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"k":[1,{"tools":[]}]},"tools":[{"description":"d \u00e9 }","name":"a","requires_confirmation":false},` +
		`{"name":"b","inputSchema":{"type":"object"},"requires_confirmation":true},{"name":"x"},{}],"nextCursor":"c"}`
	if string(out) != want {
		t.Fatalf("\n got %s\nwant %s", out, want)
	}
	for _, bad := range []string{`[]`, `{"x":1}`, `{"tools":{}}`, `{"tools":[1,`, `"s"`} {
		if _, err := addConfirmation(json.RawMessage(bad), flags, order); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
