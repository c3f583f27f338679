package shim

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// msgInfo is what the relay needs of one JSON-RPC line: the id (raw), the method, whether it
// is a response, and for tools/call the tool's name.
type msgInfo struct {
	id       []byte
	method   string
	response bool
	// refusal: the answer is an Invalid Request error, as the daemon refuses a request whose
	// id is already in flight.
	refusal bool
	tool    string
}

// envelope is a line's top level as the daemon's decoder reads it (encoding/json into a
// struct: keys matched case-insensitively, the last of a repeated key kept).
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// scanMessage reads the top level of a JSON object line; ok is false for anything that is
// not an object.
func scanMessage(b []byte) (m msgInfo, ok bool) {
	b = bytes.TrimSpace(b)
	var e envelope
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		return m, false
	}
	if len(e.ID) > 0 && string(e.ID) != "null" {
		m.id = e.ID
	}
	m.method = stringValue(e.Method)
	if e.Result != nil || e.Error != nil {
		m.response = true
		var je struct {
			Code int `json:"code"`
		}
		m.refusal = e.Error != nil && json.Unmarshal(e.Error, &je) == nil && je.Code == -32600
	}
	if m.method == "tools/call" {
		m.tool = toolOf(e.Params)
	}
	return m, true
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
