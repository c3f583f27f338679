package shim

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// msgInfo is what the relay needs of one JSON-RPC line on every call: the id (raw, within
// the line), the method, and whether it is a response. The tool a tools/call names matters
// only once a daemon went away (retrySafe), so it is read then, from the kept line (toolOfLine).
type msgInfo struct {
	id       []byte
	method   string
	response bool
	// refusal: the answer is an Invalid Request error, as the daemon refuses a request whose
	// id is already in flight.
	refusal bool
}

// span is a JSON value's bytes within the line being read, not a copy (json.RawMessage
// copies): the relay reads an answer's result only to know that it is there.
type span []byte

func (s *span) UnmarshalJSON(b []byte) error { *s = b; return nil }

// envelope is a line's top level as the daemon's decoder reads it (the SDK's decoder too):
// keys matched exactly, the last of a repeated key kept. A method that is not a string is
// left "". Each span points into the line.
type envelope struct {
	ID     span
	Method string
	Params span
	Result span
	Error  span
}

// decodeEnvelope reads the top level of a JSON object line; false for anything that is not
// one valid JSON object. It decodes into a map, whose keys match exactly (the last of a
// repeated key kept): encoding/json's struct decoding would take "Method" for "method", and
// the shim must judge the call the daemon runs. The spans point into b.
func decodeEnvelope(b []byte) (e envelope, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return e, false
	}
	var top map[string]span
	if json.Unmarshal(b, &top) != nil {
		return e, false
	}
	e.ID, e.Params, e.Result, e.Error = top["id"], top["params"], top["result"], top["error"]
	if m := top["method"]; len(m) > 0 && m[0] == '"' {
		_ = json.Unmarshal(m, &e.Method)
	}
	return e, true
}

// scanMessage reads what the relay needs of a JSON object line; ok is false for anything
// that is not an object. m.id points into b.
func scanMessage(b []byte) (m msgInfo, ok bool) {
	e, ok := decodeEnvelope(b)
	if !ok {
		return m, false
	}
	if len(e.ID) > 0 && string(e.ID) != "null" {
		m.id = e.ID
	}
	m.method = e.Method
	if e.Result != nil || e.Error != nil {
		m.response = true
		var je struct {
			Code int `json:"code"`
		}
		m.refusal = e.Error != nil && json.Unmarshal(e.Error, &je) == nil && je.Code == -32600
	}
	return m, true
}

// toolOfLine is the tool a tools/call request line names (see toolOf).
func toolOfLine(line []byte) string {
	e, ok := decodeEnvelope(line)
	if !ok {
		return ""
	}
	return toolOf(json.RawMessage(e.Params))
}

// toolOf is params.name of tools/call params as go-sdk's case-sensitive decoder reads it, or
// "" when which tool the daemon runs could be read two ways (two different names, or a key
// such as "Name" that a looser decoder would take). The tool the shim judges retry-safe must
// be the tool the daemon runs; "" is never a read.
func toolOf(params json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(params))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	name, seen := "", false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return ""
		}
		switch {
		case key == "name":
			s := stringValue(v)
			if seen && s != name {
				return ""
			}
			name, seen = s, true
		case strings.EqualFold(key, "name"):
			return ""
		}
	}
	return name
}

// stringValue is a JSON string's value ("" for anything else).
func stringValue(v []byte) string {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// idKey is an id as the daemon will echo it, for matching: the daemon re-encodes string ids
// (escapes may change) and writes integral numbers as integers (1.0 comes back as 1).
type idKey struct {
	kind byte // 0: no id; 'n' an integral number (n), 's' a string (s), 'r' anything else (s, raw)
	n    int64
	s    string
}

// keyOf is raw's idKey.
func keyOf(raw []byte) idKey {
	if len(raw) == 0 {
		return idKey{}
	}
	if raw[0] == '"' {
		return idKey{kind: 's', s: stringValue(raw)}
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return idKey{kind: 'n', n: n}
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return idKey{kind: 'n', n: int64(f)}
	}
	return idKey{kind: 'r', s: string(raw)}
}
