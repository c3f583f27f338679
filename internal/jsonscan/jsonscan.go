// Package jsonscan finds where JSON tokens end in raw bytes, without decoding them, for the
// scanners that read a message's top level in one pass (the shim's, the daemon's); it is
// stdlib only, since the shim imports it.
package jsonscan

// Space returns the index of the first byte at or after i that is not JSON whitespace.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// String returns the index just past the string starting at b[i] (a '"'), or -1 when it
// does not end.
func String(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// Value returns the index just past the JSON value starting at b[i], or -1. It checks only
// what it needs to find the end (brackets are counted, not matched; a scalar runs to the
// next delimiter): callers either validate the text first or leave that to its decoder.
func Value(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := String(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
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
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
