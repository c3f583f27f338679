package sessionwire

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// watchedReader serves r and checks, before every read, that the LineReader being fed never
// holds more than its limit.
type watchedReader struct {
	r   io.Reader
	lr  *LineReader
	t   *testing.T
	max int
}

func (w *watchedReader) Read(p []byte) (int, error) {
	if c := cap(w.lr.line); c > w.max {
		w.max = c
	}
	return w.r.Read(p)
}

// A line over the limit is answered as too long, discarded up to its newline, and the next
// line is read as it should be; the reader never holds more than the limit of one line,
// however long the line it discards (15 MiB here against a 64 KiB limit); and after a big
// line it does not keep the big buffer.
func TestLineReaderBoundsEveryLine(t *testing.T) {
	const limit = 64 << 10
	huge := strings.Repeat("x", 15<<20)
	in := `{"a":1}` + "\n" + huge + "\n" + strings.Repeat("y", limit-1) + "\n" + `{"b":2}` + "\n" + huge
	w := &watchedReader{r: strings.NewReader(in), t: t}
	lr := NewLineReader(bufio.NewReaderSize(w, 4096), limit)
	w.lr = lr
	want := []struct {
		line string
		err  error
	}{
		{`{"a":1}` + "\n", nil},
		{"", ErrLineTooLong},
		{strings.Repeat("y", limit-1) + "\n", nil},
		{`{"b":2}` + "\n", nil},
		{"", ErrLineTooLong}, // unfinished at the end of the stream
		{"", io.EOF},
	}
	for i, wl := range want {
		got, err := lr.ReadLine()
		if !errors.Is(err, wl.err) || (err == nil && string(got) != wl.line) {
			t.Fatalf("line %d: %d bytes, %v; want %d bytes, %v", i, len(got), err, len(wl.line), wl.err)
		}
		if i == 3 && cap(lr.line) > keepBuffer {
			t.Fatalf("after a line of the limit the reader keeps %d bytes", cap(lr.line))
		}
	}
	if w.max > limit {
		t.Fatalf("the reader held %d bytes of a line; its limit is %d", w.max, limit)
	}
}

// A last line without a newline is a line; the preamble and the reply, though, must be whole.
func TestLineReaderLastLineAndFirstLines(t *testing.T) {
	lr := NewLineReader(bufio.NewReader(strings.NewReader(`{"x":1}`)), 100)
	if l, err := lr.ReadLine(); err != nil || string(l) != `{"x":1}` {
		t.Fatalf("last line: %q %v", l, err)
	}
	if _, err := lr.ReadLine(); err != io.EOF {
		t.Fatalf("after the last line: %v", err)
	}
	if _, err := ReadReply(bufio.NewReader(strings.NewReader(`{"resmongw":1,"ok":true}`))); err == nil {
		t.Fatal("a reply without its newline was accepted")
	}
}

func TestLineTooLongAnswerIsAJSONRPCError(t *testing.T) {
	if got, want := string(LineTooLongAnswer(1024)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message longer than 1024 bytes"}}`+"\n"; got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
}
