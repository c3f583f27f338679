package shim

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/resmongw/resmongw/internal/jsonscan"
)

// msgInfo is what the relay needs of one JSON-RPC line, found without decoding it: the id
// (raw), the method, whether it is a response, and for tools/call the tool's name.
type msgInfo struct {
	id       []byte
	method   string
	response bool
	// refusal: the answer is an Invalid Request error, as the daemon refuses a request whose
	// id is already in flight.
	refusal bool
	tool    string
}

// scanMessage reads the top level of a JSON object line. It stops at "result" or "error"
// once it has the id, so an answer of megabytes costs a few dozen bytes of scanning (the
// daemon writes "id" before "result"). ok is false for anything that is not an object.
func scanMessage(b []byte) (m msgInfo, ok bool) { return scanWith(b, stringValue) }

// scanWith is scanMessage with the tool's name made by toolName from its JSON string (the
// relay's stdin side passes one that hands out a single string per distinct name, so a call
// costs no copy of it).
func scanWith(b []byte, toolName func([]byte) string) (m msgInfo, ok bool) {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, false
	}
	i++
	for {
		i = jsonscan.Space(b, i)
		if i >= len(b) {
			return m, false
		}
		if b[i] == '}' {
			return m, true
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return m, false
		}
		kEnd := jsonscan.String(b, i)
		if kEnd < 0 {
			return m, false
		}
		key := b[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(b[i:kEnd], &k) != nil {
				return m, false
			}
			key = []byte(k)
		}
		i = jsonscan.Space(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return m, false
		}
		i = jsonscan.Space(b, i+1)
		// Keys are matched as the daemon's decoder (encoding/json into a struct) matches
		// them, case-insensitively, and a repeated one counts as its last occurrence.
		k := foldKey(key)
		if (k == "result" || k == "error") && m.id != nil {
			// An answer whose id came first (the daemon's order): its result is not read.
			m.response = true
			m.refusal = m.refusal || isRefusal(k, b[i:])
			return m, true
		}
		vEnd := jsonscan.Value(b, i)
		if vEnd < 0 {
			return m, false
		}
		switch k {
		case "id":
			if !bytes.Equal(b[i:vEnd], []byte("null")) {
				m.id = b[i:vEnd]
			}
		case "method":
			m.method = methodName(b[i:vEnd])
		case "result", "error":
			m.response = true
			m.refusal = m.refusal || isRefusal(k, b[i:vEnd])
		case "params":
			if m.method == "tools/call" || m.method == "" {
				m.tool = nameOf(b[i:vEnd], toolName)
			}
		}
		i = vEnd
	}
}

// isRefusal reports whether the member key: v of an answer is an Invalid Request error, the
// daemon's refusal of a request whose id was already in flight (its encoder writes "code" first).
func isRefusal(key string, v []byte) bool {
	return key == "error" && bytes.HasPrefix(v, []byte(`{"code":-32600,`))
}

// nameOf is params.name of a params object: "" if none, or if which tool the daemon runs
// could be read two ways (the name twice, or a case variant of the key). The tool the shim
// judges retry-safe must be the tool the daemon runs; "" is never a read.
func nameOf(params []byte, toolName func([]byte) string) string {
	i := jsonscan.Space(params, 0)
	if i >= len(params) || params[i] != '{' {
		return ""
	}
	i++
	var name []byte // the raw JSON string of the last "name"
	seen := false
	for {
		i = jsonscan.Space(params, i)
		if i >= len(params) || params[i] == '}' {
			if !seen {
				return ""
			}
			return toolName(name)
		}
		if params[i] == ',' {
			i++
			continue
		}
		kEnd := jsonscan.String(params, i)
		if kEnd < 0 {
			return ""
		}
		rawKey := params[i:kEnd]
		i = jsonscan.Space(params, kEnd)
		if i >= len(params) || params[i] != ':' {
			return ""
		}
		i = jsonscan.Space(params, i+1)
		vEnd := jsonscan.Value(params, i)
		if vEnd < 0 {
			return ""
		}
		// Only an escaped key is decoded (a copy); "name" has no other spelling of its length
		// under Unicode folding, so a plain key folds to it only if it is 4 bytes long.
		key := rawKey[1 : len(rawKey)-1]
		isName, likeName := string(key) == "name", false
		if bytes.IndexByte(key, '\\') >= 0 {
			k := stringValue(rawKey)
			isName, likeName = k == "name", k != "name" && strings.EqualFold(k, "name")
		} else if !isName && len(key) == 4 {
			likeName = strings.EqualFold(string(key), "name")
		}
		switch {
		case isName:
			v := params[i:vEnd]
			if seen && !bytes.Equal(v, name) && stringValue(v) != stringValue(name) {
				return "" // two names: which one runs is the decoder's guess, so none is a read
			}
			name, seen = v, true
		case likeName:
			return "" // "Name" is not the SDK's field, but a looser decoder's: ambiguous
		}
		i = vEnd
	}
}

// foldKey is key lower-cased when it is one of the members the relay reads, matched as
// encoding/json matches struct fields (Unicode simple folding, so "ID" and "Method" count);
// "" otherwise.
func foldKey(key []byte) string {
	for _, k := range []string{"id", "method", "result", "error", "params"} {
		if len(key) >= len(k) && len(key) <= 3*len(k) && strings.EqualFold(string(key), k) {
			return k
		}
	}
	return ""
}

// methodName is a method's name from its JSON string: the methods a session sends all along
// are constants, not a copy per line.
func methodName(v []byte) string {
	if len(v) >= 2 && v[0] == '"' {
		switch string(v[1 : len(v)-1]) {
		case "tools/call":
			return "tools/call"
		case "tools/list":
			return "tools/list"
		case "ping":
			return "ping"
		case "initialize":
			return "initialize"
		case "notifications/initialized":
			return "notifications/initialized"
		case "notifications/cancelled":
			return "notifications/cancelled"
		case "notifications/progress":
			return "notifications/progress"
		case "notifications/message":
			return "notifications/message"
		case "resources/list":
			return "resources/list"
		case "prompts/list":
			return "prompts/list"
		}
	}
	return stringValue(v)
}

// stringValue is a JSON string's value ("" for anything else).
func stringValue(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return string(v[1 : len(v)-1])
	}
	// Escapes, or bytes that are not UTF-8 (which a decoder turns into U+FFFD, as the daemon's
	// does): decode it as the daemon will.
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// idKey is an id as the daemon will echo it, for matching: the daemon re-encodes string ids
// (escapes may change) and writes integral numbers as integers (1.0 comes back as 1). A
// number is kept by value, so the common id (an integer) costs no string.
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
	if n, ok := plainInt(raw); ok {
		return idKey{kind: 'n', n: n}
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return idKey{kind: 'n', n: n}
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return idKey{kind: 'n', n: int64(f)}
	}
	return idKey{kind: 'r', s: string(raw)}
}

// plainInt parses an integer of up to 18 digits, the shape every harness's ids have.
func plainInt(raw []byte) (int64, bool) {
	d := raw
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if raw[0] == '-' {
		n = -n
	}
	return n, true
}
