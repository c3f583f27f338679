package proxy

import "github.com/resmongw/resmongw/internal/jsonscan"

// ObjectMembers calls fn with the key (the bytes between its quotes, escapes left as they
// are) and the raw value (without surrounding whitespace) of each member of obj, a JSON
// object, in order. It is for text already known to be valid JSON (json.Valid, or a value cut
// from such text): it checks only what it must to stay inside obj, and reports false when obj
// is not shaped as it expects (then nothing it passed to fn may be trusted). Why: decoding a
// request's top level and a tools/call's params with encoding/json scans every byte twice and
// goes through reflection, a visible part of a call's CPU in the daemon; the callers decode
// through encoding/json whenever a key needs more than a byte comparison (escapes, other
// letter cases), so what they decide is what json.Unmarshal would.
func ObjectMembers(obj []byte, fn func(key, value []byte)) bool {
	i := jsonscan.Space(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = jsonscan.Space(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return jsonscan.Space(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		ke := jsonscan.String(obj, i)
		if ke < 0 {
			return false
		}
		key := obj[i+1 : ke-1]
		i = jsonscan.Space(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = jsonscan.Space(obj, i+1)
		ve := jsonscan.Value(obj, i)
		if ve < 0 {
			return false
		}
		fn(key, obj[i:ve])
		i = jsonscan.Space(obj, ve)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = jsonscan.Space(obj, i+1)
		case '}':
			return jsonscan.Space(obj, i+1) == len(obj)
		default:
			return false
		}
	}
}

// PlainJSONKey reports whether key (as ObjectMembers passes it) means exactly its bytes to
// encoding/json: no escape and no byte outside ASCII, where unquoting or Unicode case folding
// could make it another field's name.
func PlainJSONKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// FoldsTo reports whether the plain key would be matched to field by encoding/json's
// case-insensitive field matching (an exact match is not a fold).
func FoldsTo(key []byte, field string) bool {
	if len(key) != len(field) || string(key) == field {
		return false
	}
	for i := 0; i < len(key); i++ {
		a, b := key[i], field[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// PlainJSONString returns the text of a JSON string literal that needs no unquoting (no
// escape, no control or non-ASCII byte); ok is false otherwise (decode it with encoding/json).
func PlainJSONString(lit []byte) (s string, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(body), true
}
