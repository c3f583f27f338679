package shim

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/sessionwire"
)

// reconnectWait bounds how long the shim looks for a daemon after the one serving it went
// away: above the longest graceful drain of the old daemon with default timeouts (its other
// sessions' calls, drainBound ≈ 72 s) which holds the lock until it exits, so a restart is
// never mistaken for a missing daemon. A daemon that starts takes well under a second. A var
// ReconnectWaitEnv sets it (0: do not reconnect at all, end the session as before).
var reconnectWait = 90 * time.Second

// ReconnectWaitEnv overrides reconnectWait (a duration, like 30s).
const ReconnectWaitEnv = "RESMONGW_RECONNECT_WAIT"

// readBuffer is each direction's read buffer. The shim runs once per harness session, so its
// memory counts per session: a request or a small answer fits the read buffer.
const readBuffer = 4 << 10

// initializedLine is the notification replayed after initialize on a new daemon.
var initializedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")

// relay is one harness session across any number of daemon connections (issue 12). It relays
// lines both ways and keeps just enough to rebuild the session on a new daemon: the harness's
// initialize (replayed under an id of ours, its answer swallowed, then initialized), and the
// requests in flight, so that when a daemon goes away every one of them is answered by the new
// daemon or by us and none is left waiting, no write is ever sent twice, and a read is sent
// at most twice.
type relay struct {
	// dialer connects to a daemon, starting one as at the start (service first, then spawn);
	// nil: never reconnect.
	dialer func() (*net.UnixConn, error)
	stdout io.Writer
	ppid   int
	events chan event
	// wait bounds each reconnect (reconnectWait when the relay was made; 0: never reconnect).
	wait time.Duration

	omu sync.Mutex // stdout: one line at a time

	// wmu is held while writing to the daemon and through a whole reconnect, so the harness's
	// lines wait (in its pipe) and go out in order after the replay. Lock order: wmu, then mu.
	wmu sync.Mutex

	mu          sync.Mutex
	conn        *net.UnixConn
	epoch       int             // which connection conn is (1, 2, …)
	pending     map[idKey]*call // requests the harness waits on
	notes       []*call         // notifications that could not be written yet
	seq         uint64          // arrival order of harness lines
	initLine    []byte          // the harness's initialize request, as it sent it
	initKey     idKey
	initDone    bool // the harness got its initialize answer: a new daemon needs the replay
	initialized bool // the harness sent notifications/initialized
	replayKey   idKey
	readTools   map[string]bool // from the daemon's reply: tools/call that may be retried
	session     int             // the session protocol agreed with the current daemon
	stdinClosed bool
	writes      string // --writes, sent in every preamble (a reconnected session keeps it)
	maxOutput   int    // --max-output, likewise
	ending      bool   // the session ends here: harness lines are no longer taken (holdStdin)
	fallback           // serving the session in process while no daemon can be reached (fallback.go)
}

// call is one request the harness sent and has not had answered.
type call struct {
	seq     uint64
	key     idKey
	id      []byte // as the harness wrote it, for our own answers
	method  string
	line    []byte // as the harness wrote it: resent to a new daemon, and read for its tool
	epoch   int    // the connection it was last written to; 0: not written since the last one ended
	retried bool
	// dups counts requests the harness sent under this id while it was in flight: the daemon
	// refuses each (-32600), and none may take this call's entry, so a crash still answers
	// it. done: the call itself is answered, and the entry waits only for those refusals.
	dups int
	done bool
}

// event is the end of one connection's reading: an error (EOF, a reset) or a goodbye.
type event struct {
	epoch   int
	goodbye *sessionwire.Goodbye
	err     error
}

func newRelay(dialer func() (*net.UnixConn, error), stdout io.Writer) *relay {
	return &relay{dialer: dialer, stdout: stdout, ppid: os.Getppid(), events: make(chan event, 4),
		pending: map[idKey]*call{}, wait: reconnectWait}
}

// retrySafe reports whether c may be sent once more after a daemon went away under it: every
// method but tools/call only reads, and a tools/call only when the daemon named its tool a
// read. Under r.mu.
func (r *relay) retrySafe(c *call) bool {
	return c.method != "tools/call" || r.readTools[toolOfLine(c.line)]
}

// newCall is a call for a request line. Under r.mu.
func (r *relay) newCall(line []byte, m msgInfo, k idKey) *call {
	return &call{seq: r.seq, key: k, id: slices.Clone(m.id), method: m.method, line: slices.Clone(line)}
}

// answered settles the call the daemon answered under id (raw): out of pending, or, while
// requests that reused its id are owed their refusals (refusal: this answer is one), kept for
// them. Under r.mu.
func (r *relay) answered(raw []byte, refusal bool) {
	c := r.pending[keyOf(raw)]
	if c == nil {
		return
	}
	switch {
	case c.dups > 0 && refusal:
		c.dups--
		if c.dups > 0 || !c.done {
			return
		}
	case c.dups > 0:
		c.done = true
		r.initDone = r.initDone || c.key == r.initKey
		return
	}
	delete(r.pending, c.key)
	r.initDone = r.initDone || c.key == r.initKey
}

// toHarness writes one line to the harness.
func (r *relay) toHarness(line []byte) error {
	r.omu.Lock()
	defer r.omu.Unlock()
	_, err := r.stdout.Write(line)
	return err
}

// fromHarness records one harness line and writes it to the daemon.
func (r *relay) fromHarness(line []byte, m msgInfo, ok bool) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	if r.ending {
		r.mu.Unlock()
		return // the session is ending (holdStdin): nobody would answer it
	}
	r.seq++
	var c *call
	switch {
	case ok && m.method != "" && m.id != nil:
		k := keyOf(m.id)
		owed := 0
		if first := r.pending[k]; first != nil && !first.done {
			// An id already in flight: the daemon refuses this one with an error of its own,
			// and the first request keeps its entry, so a crash still answers it.
			first.dups++
			break
		} else if first != nil {
			// The call under this id was answered and only refusals are owed: this is a new
			// call, which takes the entry and owes them too.
			owed = first.dups
			delete(r.pending, k)
		}
		c = r.newCall(line, m, k)
		c.dups = owed
		r.pending[c.key] = c
		if m.method == "initialize" {
			r.initLine, r.initKey, r.initDone = slices.Clone(line), c.key, false
		}
	case ok && m.method == "notifications/initialized":
		r.initialized = true
	case ok && m.method == "notifications/cancelled":
		// The daemon will not answer a cancelled request: nothing is owed any more.
		if k := cancelledKey(line); k.kind != 0 {
			delete(r.pending, k)
		}
	}
	conn, epoch := r.conn, r.epoch
	r.mu.Unlock()
	if c != nil && c.method == "tools/call" && r.tryDaemon() {
		return // a daemon answered: the call waits, unwritten, for the session to move there
	}
	_, err := conn.Write(line)
	r.mu.Lock()
	switch {
	case err == nil && c != nil:
		c.epoch = epoch
	case err != nil && c == nil && !(ok && (m.response || m.id != nil && m.method != "")):
		// A notification (or a line the daemon will refuse) for the next daemon; a response
		// to the old daemon's request means nothing to a new one.
		r.notes = append(r.notes, &call{seq: r.seq, line: slices.Clone(line)})
	}
	// A request whose write failed stays unwritten (epoch 0): the daemon cannot have started
	// a line it did not get whole, so the next daemon gets it.
	r.mu.Unlock()
}

// stdinLoop relays the harness's lines until stdin ends, then half-closes the daemon
// connection so the daemon sees the end of the session.
func (r *relay) stdinLoop(stdin io.Reader, done chan<- struct{}) {
	lines := sessionwire.NewLineReader(bufio.NewReaderSize(stdin, readBuffer), sessionwire.MaxRequestLine)
	for {
		line, err := lines.ReadLine()
		if errors.Is(err, sessionwire.ErrLineTooLong) {
			// Refused here, as the daemon would refuse it: it never reaches the socket.
			_ = r.toHarness(sessionwire.LineTooLongAnswer(lines.Limit()))
			continue
		}
		if err != nil {
			break
		}
		if line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
		m, ok := scanMessage(line)
		r.fromHarness(line, m, ok)
	}
	r.wmu.Lock()
	r.mu.Lock()
	r.stdinClosed = true
	conn := r.conn
	r.mu.Unlock()
	_ = conn.CloseWrite()
	r.wmu.Unlock()
	close(done)
}

// readerLoop relays one daemon connection's lines to the harness until it ends, and reports
// how it ended on r.events. Only whole lines are relayed, so a daemon that dies mid-answer
// leaves no half line on the harness's stdout for our own answer to follow.
func (r *relay) readerLoop(br *bufio.Reader, epoch int) {
	lines := sessionwire.NewLineReader(br, sessionwire.MaxAnswerLine)
	for {
		line, err := lines.ReadLine()
		if err == nil && line[len(line)-1] != '\n' {
			err = io.ErrUnexpectedEOF // half a line: the daemon died writing it
		}
		if err != nil {
			r.events <- event{epoch: epoch, err: err}
			return
		}
		if g, ok := sessionwire.ParseGoodbye(line); ok {
			r.events <- event{epoch: epoch, goodbye: &g}
			return
		}
		if m, ok := scanMessage(line); ok && m.response && m.id != nil {
			r.mu.Lock()
			if r.replayKey.kind != 0 && keyOf(m.id) == r.replayKey {
				r.replayKey = idKey{}
				r.mu.Unlock()
				continue // the replayed initialize: ours
			}
			r.answered(m.id, m.refusal)
			r.mu.Unlock()
		}
		if err := r.toHarness(line); err != nil {
			r.events <- event{epoch: epoch, err: &harnessWriteError{err}}
			return
		}
	}
}

// sendPreamble opens a session on conn.
func sendPreamble(conn *net.UnixConn, ppid int, writes string, maxOutput int) error {
	pre := sessionwire.NewPreamble(sessionwire.KindMCP, os.Getenv, parentArgv0(ppid))
	pre.Session = sessionwire.SessionProtocol
	pre.Writes = writes
	pre.MaxOutput = maxOutput
	_, err := conn.Write(sessionwire.Line(pre))
	return err
}

// helloError is why a daemon did not take the session; retry says another attempt may work
// (a daemon starting or stopping).
type helloError struct {
	msg   string
	retry bool
}

func (e *helloError) Error() string { return e.msg }

// readReply reads the daemon's reply to the preamble.
func readReply(conn *net.UnixConn) (*bufio.Reader, sessionwire.Reply, error) {
	br := bufio.NewReaderSize(conn, readBuffer)
	_ = conn.SetReadDeadline(time.Now().Add(replyWait))
	reply, err := sessionwire.ReadReply(br)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return nil, reply, &helloError{closedEarly, true}
	case errors.Is(err, sessionwire.ErrNotAReply):
		return nil, reply, &helloError{fmt.Sprintf("unexpected first line from the daemon (is %s a resmongw socket?)", conn.RemoteAddr()), false}
	case err != nil:
		return nil, reply, &helloError{fmt.Sprintf("no answer from the daemon: %v", err), true}
	}
	if !reply.OK {
		return nil, reply, &helloError{"the daemon refused the session: " + reply.Error, reply.Error == shuttingDown}
	}
	_ = conn.SetReadDeadline(time.Time{})
	return br, reply, nil
}

// shuttingDown is the refusal of a daemon that is stopping (daemon.serveMCP).
const shuttingDown = "the daemon is shutting down"

// agree takes what the daemon's reply says about the session protocol. Under r.mu.
func (r *relay) agree(reply sessionwire.Reply) {
	r.session = min(reply.Session, sessionwire.SessionProtocol)
	r.readTools = map[string]bool{}
	if r.session >= 1 {
		for _, t := range reply.ReadTools {
			r.readTools[t] = true
		}
	}
}

// daemonGone handles the end of the current connection. It returns done (and the exit code)
// when the session is over; otherwise a new daemon serves it.
func (r *relay) daemonGone(ev event) (code int, done bool) {
	r.mu.Lock()
	closed, owed, moving := r.stdinClosed, len(r.pending), r.movingToDaemon()
	r.mu.Unlock()
	if closed && owed == 0 {
		return 0, true // the harness hung up and has every answer: the normal end
	}
	if gb := r.inProcessGoodbye(); gb != nil {
		ev.goodbye = gb
	}
	if ev.goodbye != nil && ev.goodbye.Mode == sessionwire.GoodbyeStop {
		r.holdStdin()
		r.answerAll(ev.goodbye, true)
		if closed {
			return 0, true
		}
		return fail("the daemon was stopped ('resmongw stop'), which ends this session; restart this MCP server once the daemon runs again"), true
	}
	if (r.dialer == nil || r.wait == 0) && !moving {
		r.holdStdin()
		r.answerAll(ev.goodbye, false)
		if closed {
			return 0, true
		}
		return fail(daemonEnded), true
	}
	if err := r.reconnect(ev.goodbye); err != nil {
		r.holdStdin()
		r.answerAll(nil, false)
		if closed {
			return 0, true
		}
		return fail("%v", err), true
	}
	return 0, false
}

// holdStdin stops taking the harness's requests, for a session about to end: a request
// recorded after answerAll would be owed an answer nobody writes, whereas one left unread
// meets the harness's own end-of-stream when we exit. The connection is closed first, so a
// write blocked on it (holding wmu) fails and lets go.
func (r *relay) holdStdin() {
	r.mu.Lock()
	c := r.conn
	r.mu.Unlock()
	_ = c.Close()
	r.wmu.Lock()
	r.mu.Lock()
	r.ending = true
	r.mu.Unlock()
	r.wmu.Unlock()
}

// started reports whether the daemon that ended with gb (nil: it died) may have started c.
func started(c *call, gb *sessionwire.Goodbye, abandoned map[idKey]bool) bool {
	if c.epoch == 0 {
		return false
	}
	return gb == nil || abandoned[c.key]
}

func abandonedKeys(gb *sessionwire.Goodbye) map[idKey]bool {
	m := map[idKey]bool{}
	if gb != nil {
		for _, id := range gb.Abandoned {
			m[keyOf(id)] = true
		}
	}
	return m
}

// answerAll answers every request still owed, for a session that ends here.
func (r *relay) answerAll(gb *sessionwire.Goodbye, stopped bool) {
	abandoned := abandonedKeys(gb)
	r.mu.Lock()
	var out [][]byte
	for _, c := range r.sorted() {
		why := whyNotSent
		if started(c, gb, abandoned) {
			why = whyUnknown
			if r.retrySafe(c) {
				why = whyReadLost
			}
		}
		if !c.done {
			out = append(out, errorAnswer(c, why, stopped))
		}
		out = append(out, dupAnswers(c)...)
		delete(r.pending, c.key)
	}
	r.mu.Unlock()
	for _, l := range out {
		_ = r.toHarness(l)
	}
}

// sorted is the pending calls in arrival order. Under r.mu.
func (r *relay) sorted() []*call {
	cs := make([]*call, 0, len(r.pending))
	for _, c := range r.pending {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	return cs
}

// reconnect rebuilds the session on a new daemon. Calls the old daemon may have started and
// did not answer are settled first: a write is answered at once (outcome unknown, never sent
// again), a read is sent once more, and a read already sent twice is answered. Calls it never
// started (a goodbye says which) simply go to the new daemon, as do those the harness sends
// meanwhile (they wait in its pipe: we do not read stdin during the reconnect).
func (r *relay) reconnect(gb *sessionwire.Goodbye) error {
	r.mu.Lock()
	old := r.conn
	r.mu.Unlock()
	_ = old.Close() // a write blocked on it fails, and that call stays unwritten
	r.wmu.Lock()
	defer r.wmu.Unlock()

	abandoned := abandonedKeys(gb)
	r.mu.Lock()
	var answers [][]byte
	for _, c := range r.sorted() {
		// Requests that reused the id of one in flight were refused by the old daemon, or
		// would have been: the new daemon never sees them, so their refusals are ours.
		answers = append(answers, dupAnswers(c)...)
		c.dups = 0
		switch {
		case c.done:
			delete(r.pending, c.key)
		case !started(c, gb, abandoned):
			c.epoch = 0
		case r.retrySafe(c) && !c.retried:
			c.retried, c.epoch = true, 0
		default:
			why := whyUnknown
			if r.retrySafe(c) {
				why = whyTriedTwice
			}
			answers = append(answers, errorAnswer(c, why, false))
			delete(r.pending, c.key)
		}
	}
	r.mu.Unlock()
	for _, l := range answers {
		_ = r.toHarness(l)
	}

	conn, br, reply, err := r.redial()
	inProcess := err != nil
	if inProcess {
		if conn, br, reply, err = r.reconnectInProcess(err); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.onFallback = inProcess
	r.epoch++
	epoch := r.epoch
	r.conn = conn
	r.agree(reply)
	type out struct {
		line []byte
		c    *call
	}
	var lines []out
	if r.initLine != nil && r.initDone {
		rid := replayID(epoch)
		if l := withID(r.initLine, rid); l != nil {
			r.replayKey = keyOf(rid)
			lines = append(lines, out{line: l})
			if r.initialized {
				lines = append(lines, out{line: initializedLine})
			}
		}
	}
	queued := append(r.sorted(), r.notes...)
	r.notes = nil
	slices.SortFunc(queued, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	for _, c := range queued {
		if c.key.kind == 0 || c.epoch == 0 {
			lines = append(lines, out{line: c.line, c: c})
		}
	}
	closed := r.stdinClosed
	r.mu.Unlock()
	go r.readerLoop(br, epoch)
	for _, l := range lines {
		if _, err := conn.Write(l.line); err != nil {
			break // this daemon is gone too: its reader reports it, and the rest stay unwritten
		}
		if l.c != nil && l.c.key.kind != 0 {
			r.mu.Lock()
			l.c.epoch = epoch
			r.mu.Unlock()
		}
	}
	if closed {
		_ = conn.CloseWrite()
	}
	return nil
}

// redial connects to a daemon (starting one if need be) and opens the session, retrying
// within reconnectWait while none takes it. A socket we refuse to trust, or a daemon that
// refuses us for good, ends the attempt at once.
func (r *relay) redial() (*net.UnixConn, *bufio.Reader, sessionwire.Reply, error) {
	deadline := time.Now().Add(r.wait)
	backoff := 20 * time.Millisecond
	for {
		conn, err := r.takeNext(), error(nil)
		if conn == nil {
			conn, err = r.dialer()
		}
		if err == nil {
			if err = sendPreamble(conn, r.ppid, r.writes, r.maxOutput); err == nil {
				var br *bufio.Reader
				var reply sessionwire.Reply
				if br, reply, err = readReply(conn); err == nil {
					return conn, br, reply, nil
				}
			}
			conn.Close()
			var he *helloError
			if errors.As(err, &he) && !he.retry {
				return nil, nil, sessionwire.Reply{}, fmt.Errorf("reconnecting after the daemon went away: %v", err)
			}
		} else if errors.Is(err, sessionwire.ErrRefused) {
			return nil, nil, sessionwire.Reply{}, err
		}
		if time.Now().After(deadline) {
			return nil, nil, sessionwire.Reply{}, fmt.Errorf("the daemon went away and none came back within %v (%v)", r.wait, err)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// cancelledKey is the idKey of the request a notifications/cancelled line names (a rare
// line: decoded in full).
func cancelledKey(line []byte) idKey {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || len(n.Params.RequestID) == 0 {
		return idKey{}
	}
	return keyOf(n.Params.RequestID)
}
