package shim

import (
	"bufio"
	"fmt"
	"net"

	"github.com/resmongw/resmongw/sessionwire"
)

// A session outlives "no daemon" (issue 25.4). When no daemon can be reached or started, the
// shim does not exit: it serves the session in its own process with the daemon's own session
// code (Unreachable, which is daemon.ServeUnreachable: the same MCP server over the same tool
// table), so initialize, server/discover and tools/list answer as a daemon's would and every
// tools/call answers isError with why and the fix. That in-process session is, to the relay,
// one more daemon connection (one end of a socket pair): every tools/call first tries the real
// daemon (starting it as at the start), and once one answers, the in-process session is ended
// and the relay's own reconnect moves the harness's session over (its initialize replayed),
// with that call as the first the daemon runs.

// Unreachable serves one session on c as a daemon would, with every tool answering why the
// daemon cannot be reached (why's latest reason); it returns when c is closed or half-closed.
// The command passes daemon.ServeUnreachable (the shim itself imports nothing of the daemon).
type Unreachable func(c *net.UnixConn, why func() error)

// fallback is the relay's state for serving a session in process. Under relay.mu.
type fallback struct {
	unreachable Unreachable   // nil: no fallback (the session ends as before)
	onFallback  bool          // the current connection is the in-process session
	why         error         // why the daemon could not be reached, at the last try
	next        *net.UnixConn // a daemon that answered a call's try: the reconnect's first dial
}

// reason is why the daemon could not be reached, for the in-process session's answers.
func (r *relay) reason() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}

// serveInProcess starts the in-process session and returns the relay's end of it, as a dial
// would; the caller sends the preamble as to any daemon.
func (r *relay) serveInProcess(why error) (*net.UnixConn, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("%v (and serving this session without it failed: %v)", why, err)
	}
	r.mu.Lock()
	r.onFallback, r.why, r.next = true, why, nil
	r.mu.Unlock()
	fmt.Fprintf(stderr, "resmongw stdio: %v; until the daemon can be reached, each tool call says so and tries it again\n", why)
	go r.unreachable(theirs, r.reason)
	return ours, nil
}

// reconnectInProcess is the end of a reconnect that found no daemon: the session goes on in process
// (when the command gave a way to) instead of ending.
func (r *relay) reconnectInProcess(why error) (*net.UnixConn, *bufio.Reader, sessionwire.Reply, error) {
	if r.unreachable == nil {
		return nil, nil, sessionwire.Reply{}, why
	}
	conn, err := r.serveInProcess(why)
	if err != nil {
		return nil, nil, sessionwire.Reply{}, err
	}
	if err := sendPreamble(conn, r.ppid, r.writes, r.maxOutput); err != nil {
		conn.Close()
		return nil, nil, sessionwire.Reply{}, err
	}
	br, reply, err := readReply(conn)
	if err != nil {
		conn.Close()
		return nil, nil, sessionwire.Reply{}, err
	}
	return conn, br, reply, nil
}

// tryDaemon is a tools/call's try of the daemon while the session is served in process. When a
// daemon answers the dial it is kept for the reconnect and the in-process session is
// half-closed: it answers what it has and ends, and that end moves the session to the daemon
// (daemonGone, reconnect), the call included. It reports whether the call is to wait for that
// (not be written to the in-process session). Under r.wmu, not r.mu.
func (r *relay) tryDaemon() bool {
	r.mu.Lock()
	try := r.onFallback && r.next == nil && r.dialer != nil
	conn := r.conn
	r.mu.Unlock()
	if !try {
		return false
	}
	uc, err := r.dialer()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.why = err
		return false
	}
	r.next = uc
	_ = conn.CloseWrite()
	return true
}

// takeNext is the daemon a call's try reached, if any: the reconnect dials it first.
func (r *relay) takeNext() *net.UnixConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.next
	r.next = nil
	return c
}

// movingToDaemon reports whether the connection that ended is the in-process session and a
// daemon waits to take the session over. Under r.mu.
func (r *relay) movingToDaemon() bool { return r.onFallback && r.next != nil }

// inProcessGoodbye is how the in-process session's end reads to the reconnect: a goodbye that
// abandons nothing, since whatever it had not answered it never started (it sends nothing
// anywhere), so every call still owed goes to the daemon, a write included. nil when the
// connection that ended was a daemon's.
func (r *relay) inProcessGoodbye() *sessionwire.Goodbye {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.onFallback {
		return nil
	}
	return &sessionwire.Goodbye{Resmongw: "goodbye", Mode: sessionwire.GoodbyeRestart}
}
