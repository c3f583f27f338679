package proxy

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
	i := skipJSONSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipJSONSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return skipJSONSpace(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		ke := endOfString(obj, i)
		if ke < 0 {
			return false
		}
		key := obj[i+1 : ke]
		i = skipJSONSpace(obj, ke+1)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipJSONSpace(obj, i+1)
		ve := endOfValue(obj, i)
		if ve < 0 {
			return false
		}
		fn(key, obj[i:ve])
		i = skipJSONSpace(obj, ve)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = skipJSONSpace(obj, i+1)
		case '}':
			return skipJSONSpace(obj, i+1) == len(obj)
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

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfString returns the index of the quote closing the string that starts at b[i], or -1.
func endOfString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// endOfValue returns the index just past the value starting at b[i], or -1.
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		if e := endOfString(b, i); e >= 0 {
			return e + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := endOfString(b, j)
				if e < 0 {
					return -1
				}
				j = e
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
