package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// fastParamsCases are tools/call params the one-pass reading must read as json.Unmarshal
// into fastParams does: repeated keys, null, wrong types, other letter cases, escapes, _meta.
var fastParamsCases = []string{
	`{"name":"health","arguments":{}}`,
	`{"name":"health"}`,
	`{"name":null,"arguments":{}}`,
	`{"name":"a","name":null}`,
	`{"name":null,"name":"b"}`,
	`{"name":1}`,
	`{"name":1,"name":"x"}`,
	`{"name":"h\u0065alth","arguments":[1]}`,
	`{"Name":"health"}`,
	`{"n\u0061me":"health"}`,
	`{"name":"health","arguments":null}`,
	`{"name":"health","arguments":{"a":"}"},"arguments":{"b":2}}`,
	`{"name":"health","_meta":{"progressToken":1}}`,
	`{"name":"health","_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}`,
	`{"name":"health","_meta":{"io.modelcontextprotocol/x":1},"_meta":null}`,
	`{"name":"health","_meta":{"io.modelcontextprotocol/x":1},"_meta":{"y":2}}`,
	`{"name":"health","_meta":{"io.modelcontextprotocol\/x":1}}`,
	`{"name":"health","_meta":[]}`,
	`{"name":"health","_META":{"io.modelcontextprotocol/x":1}}`,
	`{"name":"héalth"}`,
	`[]`,
	`null`,
	`"name"`,
	`{"name":"health",}`,
	`{"name" "health"}`,
}

// readFastParams decides what json.Unmarshal into fastParams decides, on every case.
func TestReadFastParamsMatchesUnmarshal(t *testing.T) {
	for _, in := range fastParamsCases {
		checkFastParams(t, []byte(in))
	}
}

// The object scan hands each member's key and raw value over in order, and refuses what is
// not an object.
func TestObjectMembersListsEachMember(t *testing.T) {
	var got []string
	ok := ObjectMembers([]byte(` { "a" : [1, "]"] , "b\"c":{"d":{}},"e":-1.5e3, "f":null } `), func(k, v []byte) {
		got = append(got, string(k)+"="+string(v))
	})
	want := `a=[1, "]"]|b\"c={"d":{}}|e=-1.5e3|f=null`
	if !ok || strings.Join(got, "|") != want {
		t.Fatalf("ok %v, members %q, want %q", ok, strings.Join(got, "|"), want)
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":"1}`, `{"a":1}x`} {
		if ObjectMembers([]byte(bad), func(_, _ []byte) {}) {
			t.Errorf("%q accepted as an object", bad)
		}
	}
}

func checkFastParams(t *testing.T, params []byte) {
	t.Helper()
	var p fastParams
	wantOK := len(params) > 0 && json.Unmarshal(params, &p) == nil
	wantMeta := false
	for k := range p.Meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			wantMeta = true
		}
	}
	got, ok := readFastParams(params)
	if ok != wantOK {
		t.Fatalf("%s: ok %v, json.Unmarshal's %v", params, ok, wantOK)
	}
	if !ok {
		return
	}
	if (got.name == nil) != (p.Name == nil) || got.name != nil && *got.name != *p.Name {
		t.Errorf("%s: name %v, json.Unmarshal's %v", params, deref(got.name), deref(p.Name))
	}
	if !bytes.Equal(got.arguments, p.Arguments) || (got.arguments == nil) != (p.Arguments == nil) {
		t.Errorf("%s: arguments %q, json.Unmarshal's %q", params, got.arguments, p.Arguments)
	}
	if got.protocolMeta != wantMeta {
		t.Errorf("%s: protocol _meta %v, json.Unmarshal's %v", params, got.protocolMeta, wantMeta)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func FuzzReadFastParams(f *testing.F) {
	for _, in := range fastParamsCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, params []byte) { checkFastParams(t, params) })
}
