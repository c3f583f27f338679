// Package activity is the daemon's record of tool calls that `resmongw activity` shows: who
// called which tool, and how it ended, kept in memory and in a bounded file, never with an
// argument value, a result or a token.
package activity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Record is one finished tools/call. It has no field for arguments or results, so none can be
// recorded: what a call asked for and got stays between the harness and resmon.
type Record struct {
	Time          time.Time `json:"time"`
	Session       uint64    `json:"session"`
	Client        string    `json:"client,omitempty"` // clientInfo.name
	ClientVersion string    `json:"client_version,omitempty"`
	Target        string    `json:"target"`
	Tool          string    `json:"tool"` // mcpserver.UnknownTool for a name the table lacks, never the name sent
	Write         bool      `json:"write"`
	Outcome       string    `json:"outcome"` // see Outcome
	// Confirmation is how a write was confirmed (asked_yes, remembered, harness, …); empty for reads.
	Confirmation string  `json:"confirmation,omitempty"`
	DurationMS   float64 `json:"duration_ms"`
}

// Outcomes besides ok and the tool error codes (not_found, invalid_argument, …).
const (
	OutcomeOK        = "ok"
	OutcomeRefused   = "refused_by_policy" // --writes=off
	OutcomeDeclined  = "declined"
	OutcomeCancelled = "cancelled"
	OutcomeTimedOut  = "timed_out"
	OutcomeCannotAsk = "cannot_ask"
	OutcomeUpstream  = "upstream_error"
	OutcomeUnknown   = "outcome_unknown" // a write was sent and its answer lost
)

// Outcome is how a call ended, from its error code ("" on success), how a write was confirmed
// (mcpserver's Confirm* values) and whether a sent write's answer was lost. A confirmation that
// kept the write from being sent names the outcome (declined, cancelled, timed_out,
// cannot_ask, asked: the form went out and the answer comes in a new call, …); the code it
// answered with would only say "refused".
func Outcome(code, confirmation string, unknown bool) string {
	switch confirmation {
	case "", "asked_yes", "remembered", "harness": // sent: the call's own result decides
	case "policy_off":
		return OutcomeRefused
	default:
		return confirmation
	}
	switch {
	case unknown:
		return OutcomeUnknown
	case code == "":
		return OutcomeOK
	}
	return code
}

// Log keeps the last records in memory, appends each to its file as a JSON line, and hands
// them to followers.
type Log struct {
	mu   sync.Mutex
	ring []Record // oldest first once full: ring[next:] then ring[:next]
	next int
	full bool
	out  io.Writer // nil: memory only
	subs map[chan Record]struct{}
}

// FollowBuffer is how many records a follower may fall behind before it is cut off: the
// daemon never waits for a reader.
const FollowBuffer = 256

// New keeps the last keep records; each is also written to out (nil for none). A record of a
// write is followed by out's Sync, when it has one, so it reaches the disk at once.
func New(out io.Writer, keep int) *Log {
	return &Log{ring: make([]Record, keep), out: out, subs: map[chan Record]struct{}{}}
}

// Load puts the records of a previous run (JSON Lines, as Add writes them) into memory, the
// last ones kept; lines that do not decode are skipped.
func (l *Log) Load(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	l.mu.Lock()
	defer l.mu.Unlock()
	for sc.Scan() {
		var rec Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil && !rec.Time.IsZero() {
			l.put(rec)
		}
	}
}

// Add records r.
func (l *Log) Add(r Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put(r)
	if l.out != nil {
		b, _ := json.Marshal(r) // a plain struct: never fails
		_, _ = l.out.Write(append(b, '\n'))
		if s, ok := l.out.(interface{ Sync() error }); ok && r.Write {
			_ = s.Sync()
		}
	}
	for ch := range l.subs {
		select {
		case ch <- r:
		default: // fell behind: cut off rather than wait
			delete(l.subs, ch)
			close(ch)
		}
	}
}

func (l *Log) put(r Record) {
	if len(l.ring) == 0 {
		return
	}
	l.ring[l.next] = r
	l.next++
	if l.next == len(l.ring) {
		l.next, l.full = 0, true
	}
}

// Records is everything in memory, oldest first.
func (l *Log) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recordsLocked()
}

func (l *Log) recordsLocked() []Record {
	if !l.full {
		return append([]Record(nil), l.ring[:l.next]...)
	}
	return append(append([]Record(nil), l.ring[l.next:]...), l.ring[:l.next]...)
}

// Follow returns what is in memory and a channel of every record added after it (closed when
// the follower falls FollowBuffer behind, or by stop).
func (l *Log) Follow() (history []Record, live <-chan Record, stop func()) {
	ch := make(chan Record, FollowBuffer)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs[ch] = struct{}{}
	return l.recordsLocked(), ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.subs[ch]; ok {
			delete(l.subs, ch)
			close(ch)
		}
	}
}

// Line encodes one record as a JSON line.
func Line(r Record) []byte {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(r)
	return b.Bytes()
}
