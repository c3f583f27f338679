package proxy

import "bytes"

// The lean path reads the usual answer's head itself. http.ReadResponse builds a Header map
// (a string per name and value) and a body reader for every answer, a visible part of a
// call's CPU and allocations; a read needs only the status, Content-Type and Content-Length
// of a plain 2xx answer (the headers matter only to MapStatus, for the others). So a head
// that is entirely buffered and in the narrow form resmon sends is read here; anything else
// (another status, a header that changes framing or the connection's reuse, a line not in
// the strictest form) is left in the buffer for http.ReadResponse, which then reads it as
// before. Whatever this accepts, http.ReadResponse reads the same way (tested by fuzzing).

// plainHead is what plainAnswerHead read.
type plainHead struct {
	status      int
	contentType string
	length      int64
}

// maxPlainLength bounds the Content-Length digits read here (18 digits cannot overflow).
const maxPlainLength = 18

// plainAnswerHead reads head, the bytes of an answer up to and including the blank line's
// "\r\n\r\n", when it is "HTTP/1.1 2xx" (not 204) with exactly one Content-Length and no
// Transfer-Encoding, Trailer or Connection header, every line ending in "\r\n", names of
// token characters, values of visible ASCII, spaces and tabs. ok is false otherwise.
func plainAnswerHead(head []byte) (h plainHead, ok bool) {
	line, rest, found := bytes.Cut(head, []byte("\r\n"))
	if !found || len(line) < len("HTTP/1.1 200") || string(line[:len("HTTP/1.1 ")]) != "HTTP/1.1 " {
		return h, false
	}
	code := line[len("HTTP/1.1 "):]
	if len(code) > 3 && code[3] != ' ' {
		return h, false
	}
	if code[0] != '2' || !isDigit(code[1]) || !isDigit(code[2]) {
		return h, false
	}
	h.status = 200 + int(code[1]-'0')*10 + int(code[2]-'0')
	if h.status == 204 || !visibleText(code[min(len(code), 3):]) {
		return h, false
	}
	h.length = -1
	seenType := false
	for {
		line, rest, found = bytes.Cut(rest, []byte("\r\n"))
		if !found {
			return h, false
		}
		if len(line) == 0 {
			// The blank line, which must end head.
			return h, len(rest) == 0 && h.length >= 0
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !tokenText(line[:colon]) || !visibleText(line[colon+1:]) {
			return h, false
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if h.length >= 0 || len(value) == 0 || len(value) > maxPlainLength {
				return h, false
			}
			var n int64
			for _, c := range value {
				if !isDigit(c) {
					return h, false
				}
				n = n*10 + int64(c-'0')
			}
			h.length = n
		case bytes.EqualFold(name, []byte("Content-Type")):
			if seenType {
				return h, false
			}
			seenType, h.contentType = true, string(value)
		case bytes.EqualFold(name, []byte("Transfer-Encoding")), bytes.EqualFold(name, []byte("Trailer")),
			bytes.EqualFold(name, []byte("Connection")):
			return h, false
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// visibleText: spaces, tabs and visible ASCII only.
func visibleText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// tokenText: an HTTP token (RFC 9110 tchar), as a header name must be.
func tokenText(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', isDigit(c):
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0:
		default:
			return false
		}
	}
	return len(b) > 0
}
