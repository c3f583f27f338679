package shim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The relay reads every harness and daemon line with scanMessage instead of a full decode.
// On any input it must not panic; on any JSON object without "result" or "error" (where it
// reads every member) it must find the id and method the daemon's decoder finds
// (encoding/json into a struct: keys case-insensitive, the last repeat wins); and a tool name
// it reports must be the one go-sdk's case-sensitive decoder runs, unambiguously.
func FuzzScanMessage(f *testing.F) {
	for _, s := range []string{initReq, initNote, readReq, writeReq, laterReq,
		`{"jsonrpc":"2.0","id":7,"result":{"x":"}"}}`, `{"id":1,"ID":2,"method":"a","Method":"b"}`,
		`{"params":{"name":"n\"x","name":"m"},"method":"tools/call","id":"\u00e9"}`, `{"id" : null}`, `[{"id":1}]`, `{`,
		`{"method":"tools/call","params":{"name":"health","NAME":"run_sweep"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := scanMessage(b)
		var w struct{ ID, Method, Params, Result, Error json.RawMessage }
		if len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' || json.Unmarshal(b, &w) != nil {
			return
		}
		if w.Result != nil || w.Error != nil {
			return
		}
		if !ok {
			t.Fatalf("a valid object was not scanned: %q", b)
		}
		id := w.ID
		if bytes.Equal(id, []byte("null")) {
			id = nil
		}
		if !bytes.Equal(m.id, id) {
			t.Fatalf("%q: id %q, encoding/json %q", b, m.id, id)
		}
		var method string
		if json.Unmarshal(w.Method, &method) == nil && method != m.method {
			t.Fatalf("%q: method %q, encoding/json %q", b, m.method, method)
		}
		if m.tool == "" || m.method != "tools/call" {
			return
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(w.Params, &params) != nil {
			t.Fatalf("%q: tool %q from params that do not decode", b, m.tool)
		}
		var name string
		if json.Unmarshal(params["name"], &name) != nil || name != m.tool {
			t.Fatalf("%q: tool %q, the SDK would run %q", b, m.tool, name)
		}
		for k := range params {
			if k != "name" && strings.EqualFold(k, "name") {
				t.Fatalf("%q: tool %q although %q could name another", b, m.tool, k)
			}
		}
	})
}
