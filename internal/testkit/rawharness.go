package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// RawHarness drives `resmongw stdio` the way a harness does, at the byte level: it writes
// JSON-RPC lines to the shim's stdin and collects every line the shim writes to stdout, keyed
// by id, so a test can count what was answered, how, and what never was. Unlike an SDK client
// it can pipeline thousands of calls and keep going across a daemon restart.
type RawHarness struct {
	Proc   *Proc
	Stderr *SyncBuffer

	stdin io.WriteCloser
	wmu   sync.Mutex

	mu      sync.Mutex
	answers map[string]json.RawMessage // id (raw JSON) → the whole answer line
	other   []string                   // lines that are no answer (notifications, garbage)
	dupes   int                        // answers to an id already answered
	changed chan struct{}              // closed and replaced on every line
	ended   bool                       // stdout reached EOF
}

// StartRawHarness starts cmd (a `resmongw stdio`) with its stdio piped to the harness.
func StartRawHarness(cmd *exec.Cmd) (*RawHarness, error) {
	h := &RawHarness{Stderr: &SyncBuffer{}, answers: map[string]json.RawMessage{}, changed: make(chan struct{})}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = h.Stderr
	h.stdin = in
	if h.Proc, err = Start(cmd); err != nil {
		return nil, err
	}
	go h.read(out)
	return h, nil
}

func (h *RawHarness) read(out io.Reader) {
	br := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			h.record(line)
		}
		if err != nil {
			h.mu.Lock()
			h.ended = true
			h.signal()
			h.mu.Unlock()
			return
		}
	}
}

func (h *RawHarness) record(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.signal()
	if json.Unmarshal(line, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		h.other = append(h.other, string(line))
		return
	}
	id := string(m.ID)
	if _, dup := h.answers[id]; dup {
		h.dupes++
	}
	h.answers[id] = append(json.RawMessage(nil), line...)
}

// signal wakes waiters; under h.mu.
func (h *RawHarness) signal() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Send writes one line (a newline is added).
func (h *RawHarness) Send(line string) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err := io.WriteString(h.stdin, line+"\n")
	return err
}

// CloseStdin closes the shim's stdin, as a harness that ends the session does.
func (h *RawHarness) CloseStdin() error { return h.stdin.Close() }

// Answer is the answer line to id (raw JSON, e.g. `7` or `"a"`), if any has come.
func (h *RawHarness) Answer(id string) (json.RawMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.answers[id]
	return a, ok
}

// Answered is how many distinct ids have been answered.
func (h *RawHarness) Answered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.answers)
}

// Duplicates is how many answers repeated an id already answered.
func (h *RawHarness) Duplicates() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dupes
}

// Other is every line that was no answer.
func (h *RawHarness) Other() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.other...)
}

// WaitAnswered waits up to limit until cond holds of the answers so far (called under the
// harness's lock, after every line), or stdout ends; it reports whether cond held.
func (h *RawHarness) WaitAnswered(limit time.Duration, cond func(answers map[string]json.RawMessage) bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ok, ended, ch := cond(h.answers), h.ended, h.changed
		h.mu.Unlock()
		if ok || ended {
			return ok
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// WaitIDs waits up to limit until every id in ids is answered; the error names the first
// missing one.
func (h *RawHarness) WaitIDs(limit time.Duration, ids ...string) error {
	var missing string
	ok := h.WaitAnswered(limit, func(a map[string]json.RawMessage) bool {
		for _, id := range ids {
			if _, done := a[id]; !done {
				missing = id
				return false
			}
		}
		return true
	})
	if !ok {
		return fmt.Errorf("no answer to id %s within %v (stderr %q)", missing, limit, h.Stderr.String())
	}
	return nil
}

// ToolCall is a tools/call request line.
func ToolCall(id, tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}
