package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// headCases are answer heads plainAnswerHead must read as http.ReadResponse does, or leave to it.
var headCases = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n",
	"HTTP/1.1 200 OK\r\ndate: x\r\nserver: uvicorn\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n",
	"HTTP/1.1 201\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type:  text/plain ; charset=utf-8 \t\r\nContent-Length: 007\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n folded\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent Length: 3\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\n\r\n",
	"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\n",
	"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1  200 OK\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 200OK\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-A: \x01\r\nContent-Length: 3\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Type: b\r\nContent-Length: 3\r\n\r\n",
}

// Every head plainAnswerHead reads, http.ReadResponse reads to the same status, Content-Type,
// length and reuse, and leaves the body where plainAnswerHead would read it.
func TestPlainAnswerHeadAgreesWithReadResponse(t *testing.T) {
	read := 0
	for _, in := range headCases {
		if checkPlainHead(t, []byte(in)) {
			read++
		}
	}
	if read < 4 {
		t.Fatalf("only %d of the plain heads were read here", read)
	}
}

// What resmon sends for a read is read here; what needs net/http's reading is left to it.
func TestPlainAnswerHeadTakesOnlyThePlainForm(t *testing.T) {
	if _, ok := plainAnswerHead([]byte(headCases[1])); !ok {
		t.Errorf("uvicorn's usual head left to net/http")
	}
	for _, in := range headCases[4:] {
		if strings.Contains(in, "007") {
			continue
		}
		if h, ok := plainAnswerHead([]byte(in)); ok {
			t.Errorf("%q read here as %+v", in, h)
		}
	}
}

// checkPlainHead compares the two readers on head and reports whether plainAnswerHead read it.
func checkPlainHead(t *testing.T, head []byte) bool {
	t.Helper()
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if end < 0 || end+4 != len(head) {
		return false
	}
	h, ok := plainAnswerHead(head)
	if !ok {
		return false
	}
	body := strings.Repeat("b", int(min(h.length, 64)))
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(head)+body+"NEXT")), nil)
	if err != nil {
		t.Fatalf("%q read here as %+v; http.ReadResponse: %v", head, h, err)
	}
	if resp.StatusCode != h.status || resp.Header.Get("Content-Type") != h.contentType ||
		resp.ContentLength != h.length || resp.Close || len(resp.TransferEncoding) > 0 {
		t.Fatalf("%q read here as %+v; http.ReadResponse: status %d, type %q, length %d, close %v, encoding %v",
			head, h, resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength, resp.Close, resp.TransferEncoding)
	}
	if h.length <= 64 {
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != body {
			t.Fatalf("%q: body %q, %v; want %q", head, got, err, body)
		}
	}
	return true
}

func FuzzPlainAnswerHead(f *testing.F) {
	for _, in := range headCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, head []byte) { checkPlainHead(t, head) })
}
