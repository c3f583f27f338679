package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// The wire conformance corpus: testdata/conformance/*.txtar, each a description, a
// "-- client --" section of JSON-RPC messages and a "-- server --" section of the replies they
// must get, in order. One server (NewServer with conformanceTools, over WrapTransport, exactly
// as the daemon serves it) replays each file: every client message is sent in turn, and each
// one carrying an id is answered before the next is sent, so the order is the file's.
//
// After a deliberate change of the wire, `go test ./mcpserver -run TestWireConformance -update`
// rewrites the server sections from what the server now says; review the diff before
// committing it.

var updateConformance = flag.Bool("update", false, "rewrite the server sections of testdata/conformance from the current server")

// conformanceTools is the corpus's tool table: a read, a failing read and a write, listed out of
// name order so the corpus shows tools/list keeps table order.
func conformanceTools() []tools.Tool {
	// isError is declared so the corpus can show a payload that mentions isError (unknown
	// arguments are refused).
	obj := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}, "isError": map[string]any{"type": "boolean"}}}
	return []tools.Tool{
		{Row: toolfacts.Row{Name: "echo", Description: "Echoes its arguments.", InputSchema: obj},
			Handler: func(_ context.Context, _ backend.API, args map[string]any) (any, error) {
				return map[string]any{"args": args}, nil
			}},
		{Row: toolfacts.Row{Name: "fails", Description: "Fails with a plain error.", InputSchema: obj},
			Handler: func(context.Context, backend.API, map[string]any) (any, error) {
				return nil, errors.New("internal detail")
			}},
		{Row: toolfacts.Row{Name: "create_thing", Description: "A write.", InputSchema: obj, RequiresConfirmation: true},
			Handler: func(context.Context, backend.API, map[string]any) (any, error) {
				return map[string]any{"created": true}, nil
			}},
	}
}

func TestWireConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conformance", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			desc, sections := parseTxtar(raw)
			client := jsonValues(t, sections["client"])
			want := jsonValues(t, sections["server"])
			tools := conformanceTools()
			p := coreRawServe(t, NewServer(nil, &ServerOptions{Tools: tools}), tools)
			var got []json.RawMessage
			for _, msg := range client {
				p.send(string(compactJSON(t, msg)))
				if hasID(msg) {
					line, _ := p.recv()
					got = append(got, json.RawMessage(strings.TrimSpace(line)))
				}
			}
			if *updateConformance {
				writeServerSection(t, file, desc, sections["client"], got)
				return
			}
			if len(got) != len(want) {
				t.Fatalf("%d replies, the corpus lists %d", len(got), len(want))
			}
			for i := range got {
				if !sameJSON(t, got[i], want[i]) {
					t.Errorf("reply %d to %s:\n got %s\nwant %s", i+1, requestLabel(client, i), compactJSON(t, got[i]), compactJSON(t, want[i]))
				}
			}
		})
	}
}

// parseTxtar splits a txtar file into its leading comment and its named sections.
func parseTxtar(b []byte) (string, map[string][]byte) {
	sections := map[string][]byte{}
	var desc strings.Builder
	name := ""
	for _, line := range strings.SplitAfter(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		if name == "" {
			desc.WriteString(line)
			continue
		}
		sections[name] = append(sections[name], line...)
	}
	return desc.String(), sections
}

// jsonValues reads every JSON value in a section (one per line or pretty-printed).
func jsonValues(t *testing.T, b []byte) []json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("corpus JSON: %v", err)
		}
		out = append(out, v)
	}
	return out
}

func compactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b.Bytes()
}

func hasID(msg json.RawMessage) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(msg, &m)
	_, ok := m["id"]
	return ok
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	decode := func(raw json.RawMessage) any {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// requestLabel names the i-th client message that carried an id.
func requestLabel(client []json.RawMessage, i int) string {
	n := -1
	for _, msg := range client {
		if !hasID(msg) {
			continue
		}
		if n++; n == i {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(msg, &m)
			return m.Method + " (id " + string(m.ID) + ")"
		}
	}
	return "?"
}

func writeServerSection(t *testing.T, file, desc string, client []byte, got []json.RawMessage) {
	t.Helper()
	var b strings.Builder
	b.WriteString(desc)
	b.WriteString("-- client --\n")
	b.Write(client)
	b.WriteString("-- server --\n")
	for _, r := range got {
		b.Write(r)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
