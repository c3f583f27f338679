package sessionwire

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Line bounds, newline included. Every line the daemon or the shim reads passes a LineReader
// with one of them, so no peer can make either hold more than that per connection: 40
// connections each sending an unfinished 15 MiB line once took the daemon to 1.1 GB.
const (
	// MaxRequestLine bounds a line a harness sends (and the shim relays): a request's
	// arguments are a query, a few ids or a settings group, kilobytes at most.
	MaxRequestLine = 1 << 20
	// MaxAnswerLine bounds a line the daemon sends the shim: an answer carries at most the
	// backend's 4 MiB body as JSON text inside a JSON string, where escaping can grow it.
	MaxAnswerLine = 32 << 20
)

// keepBuffer is the largest line buffer a LineReader keeps between lines, so one big line
// does not pin its memory to an idle session.
const keepBuffer = 64 << 10

// ErrLineTooLong is a line over the reader's limit: read up to its newline and thrown away,
// so the next line is read as it should be.
var ErrLineTooLong = errors.New("line too long")

// LineReader frames newline-delimited messages, holding at most its limit of one line.
type LineReader struct {
	br    *bufio.Reader
	limit int
	line  []byte
}

// NewLineReader reads lines of at most limit bytes from br.
func NewLineReader(br *bufio.Reader, limit int) *LineReader {
	return &LineReader{br: br, limit: limit}
}

// Limit is the longest line accepted, newline included.
func (l *LineReader) Limit() int { return l.limit }

// ReadLine returns the next line, its "\n" included; the slice is valid until the next call.
// A last line without a newline is returned as it is, and io.EOF comes on the next call. A
// line over the limit is consumed to its newline without being kept and reported as
// ErrLineTooLong.
func (l *LineReader) ReadLine() ([]byte, error) {
	if cap(l.line) > keepBuffer {
		l.line = nil
	}
	l.line = l.line[:0]
	tooLong := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		if !tooLong {
			if need := len(l.line) + len(chunk); need > l.limit {
				tooLong, l.line = true, l.line[:0]
			} else {
				if need > cap(l.line) {
					// Grown by hand: append's growth would pass the limit.
					l.line = append(make([]byte, 0, min(max(2*cap(l.line), need), l.limit)), l.line...)
				}
				l.line = append(l.line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil || errors.Is(err, io.EOF) && (tooLong || len(l.line) > 0):
			if tooLong {
				return nil, ErrLineTooLong
			}
			return l.line, nil
		default:
			return nil, err
		}
	}
}

// LineTooLongAnswer is the JSON-RPC error line that answers a line over limit (its id could
// not be read, so it is null).
func LineTooLongAnswer(limit int) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{-32600, "Invalid Request: message longer than " + strconv.Itoa(limit) + " bytes"}})
	return append(b, '\n')
}
