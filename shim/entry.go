// Package shim is `resmongw stdio`: a small relay between a harness's stdio and the daemon's socket that keeps the harness's session across daemon restarts.
package shim

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/internal/procexit"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
)

// Bounds on waiting. A harness such as Codex gives a server 10 s to answer initialize, so the
// whole connect path (autostart included) must fit well inside that.
const (
	autostartWait = 3 * time.Second // how long to retry dialling a daemon we (or a sibling) started
	replyWait     = 5 * time.Second // how long the daemon may take to accept the preamble
	parentPoll    = time.Second     // how often to check that our parent is still alive
	// relistenWait is how long to keep dialling when the socket file is missing but a live
	// daemon holds the lock: it re-creates the socket on the removal's file event (at once on
	// Linux; on macOS at its next periodic check, up to 30 s, while this shim serves the
	// session itself: fallback.go).
	relistenWait = 5 * time.Second
)

// hungDaemonWait bounds how long answers may still flow after the harness closed stdin. The
// daemon itself bounds that drain (from its request timeout) and then closes, which is what
// normally ends us; this is only the safety net against a daemon that never does. A var so a
// test can shorten it.
var hungDaemonWait = 10 * time.Minute

// Main runs the shim with o, its parsed flags. Its stdout carries protocol bytes only; every
// diagnostic is one stderr line. When no daemon can be reached or started, unreachable serves
// the session in this process until one can (fallback.go); nil ends the session instead.
func Main(o Options, unreachable Unreachable) int {
	// One harness's lines, one at a time: a second P only adds threads and their stacks (and
	// hand-offs between them) to a process that runs once per session.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// No allocation profile is ever read from a shim; a sample costs a bucket kept for life.
	runtime.MemProfileRate = 0
	if o.MaxOutput < 0 {
		fmt.Fprintf(os.Stderr, "resmongw stdio: --max-output %d is not a size in bytes\n", o.MaxOutput)
		return 2
	}
	switch o.Writes {
	case "ask", "harness", "off":
	default:
		fmt.Fprintf(os.Stderr, "resmongw stdio: --writes=%q: want ask, harness or off\n", o.Writes)
		return 2
	}
	path, err := paths.Socket(o.Socket, os.Getenv)
	if err != nil {
		return fail("%v", err)
	}
	// An explicit socket means a private daemon, which the per-user service does not serve.
	explicit := o.Socket != "" || os.Getenv(paths.SocketEnv) != ""
	autostart := os.Getenv(sessionwire.NoAutostartEnv) != "1"
	demo := os.Getenv(sessionwire.DemoEnv) // an entry `resmongw demo` printed: its daemon is never started here
	autostart = autostart && demo == ""
	if v := os.Getenv(ReconnectWaitEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fail("%s=%q is not a duration (like 90s)", ReconnectWaitEnv, v)
		}
		reconnectWait = d
	}
	dialer := func() (*net.UnixConn, error) {
		c, err := redial(path, autostart, !explicit)
		if err != nil && demo != "" {
			err = sessionwire.DemoUnreachable(demo, err)
		}
		return c, err
	}
	r := newRelay(dialer, polledStdout())
	r.unreachable = unreachable
	r.writes, r.maxOutput = o.Writes, o.MaxOutput
	conn, err := connect(path, autostart, !explicit)
	if err != nil && demo != "" {
		err = sessionwire.DemoUnreachable(demo, err)
	}
	if err != nil && unreachable != nil {
		conn, err = r.serveInProcess(err)
	}
	if err != nil {
		return fail("%v", err)
	}
	return r.run(conn, polledStdin())
}

// Options are what `resmongw stdio` is told.
type Options struct {
	Socket, Writes string
	MaxOutput      int // bytes; 0 = the client's own budget
}

// Flags is stdio's flag set, bound to o: the shim is stdlib only, so a standard flag set,
// which the command parses once, either itself (a harness's launch, before the cobra tree is
// built) or through cobra.
func Flags(o *Options) *flag.FlagSet {
	fs := flag.NewFlagSet("resmongw stdio", flag.ContinueOnError)
	fs.StringVar(&o.Socket, "socket", "", "daemon socket path (default: $"+paths.SocketEnv+" or the per-user default)")
	fs.StringVar(&o.Writes, "writes", "ask", "who confirms each write: 'ask' (the gateway asks the person in the client), "+
		"'harness' (no gateway question: the harness's own approval), 'off' (writes not offered, refused)")
	fs.IntVar(&o.MaxOutput, "max-output", 0, "cut every answer to this many bytes, whatever the client (default: the client's own limit; see the README)")
	return fs
}

// redial is one attempt to reach a daemon after ours went away. While a live daemon holds
// the lock (the old one draining its other sessions, or a new one starting) it only dials,
// so the caller waits for that daemon instead of racing it; once none does, it starts one
// exactly as at the start (connect: the service first, then a spawn).
func redial(path string, autostart, viaService bool) (*net.UnixConn, error) {
	c, err := dial(path)
	if err == nil || !sessionwire.IsDown(err) {
		return c, err
	}
	if sessionwire.LockHolder(path) > 0 {
		return nil, err
	}
	return connect(path, autostart, viaService)
}

// stderr is where the one diagnostic line goes (a var so a test can read it).
var stderr io.Writer = os.Stderr

func fail(format string, a ...any) int {
	fmt.Fprintf(stderr, "resmongw stdio: "+format+"\n", a...)
	return 1
}

// connect dials the daemon, starting it when it is not running and autostart is allowed. On
// the default socket an installed per-user service is started rather than a second,
// unmanaged daemon (which would make the service's own `serve` fail with "already running"
// and restart-loop); when that fails, the daemon is spawned directly.
func connect(path string, autostart, viaService bool) (*net.UnixConn, error) {
	conn, err := dial(path)
	if err == nil || !sessionwire.IsDown(err) {
		return conn, err
	}
	if errors.Is(err, syscall.ENOENT) {
		if pid := sessionwire.LockHolder(path); pid > 0 {
			// A daemon runs but its socket file was removed: it listens again shortly.
			// Starting a second one would only fail on the lock.
			if conn, err := dialUntil(path, relistenWait); err == nil || !sessionwire.IsDown(err) {
				return conn, err
			}
			return nil, errors.New(sessionwire.SocketGone(pid, path))
		}
	}
	if !autostart {
		return nil, fmt.Errorf("the daemon is not running (no socket at %s); start it with 'resmongw start' (or 'resmongw serve' in a terminal), or install the service with 'resmongw install'", path)
	}
	if viaService && startService(os.Getenv) {
		if conn, err := dialUntil(path, autostartWait); err == nil || !sessionwire.IsDown(err) {
			return conn, err
		}
		// The service started but nobody listens (it may be crash-looping): spawn directly,
		// whose own failure says more.
	}
	exited, serr := startDaemon(path)
	if serr != nil {
		return nil, fmt.Errorf("the daemon is not running at %s and starting it failed: %v", path, serr)
	}
	// Two shims may autostart at once; the daemons' flock picks one and the other exits, so we
	// simply keep dialling whoever wins.
	conn, err = dialUntil(path, autostartWait)
	if err == nil || !sessionwire.IsDown(err) {
		return conn, err
	}
	why := ""
	select {
	case werr := <-exited:
		why = fmt.Sprintf(" (the daemon it started exited: %v)", werr)
	default:
	}
	return nil, fmt.Errorf("started the daemon but it did not listen on %s within %v%s; run 'resmongw serve --foreground' to see why", path, autostartWait, why)
}

// dialUntil waits, up to limit, for a daemon to serve path; any answer but "nobody serves
// there" ends the wait at once.
func dialUntil(path string, limit time.Duration) (*net.UnixConn, error) {
	return sessionwire.DialUntil(path, limit, sessionwire.IsDown)
}

// dial is sessionwire.Dial: the checked dial every client of the socket uses.
func dial(path string) (*net.UnixConn, error) { return sessionwire.Dial(path) }

// closedEarly is what the daemon's silence means: it refuses peers of another user without a
// word, and a daemon that is shutting down closes too.
const closedEarly = "the daemon closed the connection without answering (is it another user's daemon? see its log)"

// daemonEnded is the one line a harness's log shows when the daemon goes away under a session
// and the shim cannot reconnect.
const daemonEnded = "the daemon ended this session (it stopped or restarted); restart this MCP server to reconnect"

// run is a relay that never reconnects (tests of a single connection).
func run(conn *net.UnixConn, stdin io.Reader, stdout io.Writer) int {
	return newRelay(nil, stdout).run(conn, stdin)
}

// run sends the preamble, checks the daemon's reply, then relays lines both ways until the
// harness ends the session (stdin closed and every answer in, stdout closed, a signal, its
// death), or the daemon goes away and no other takes the session over (see reconnect). The
// exit code is 1, with one stderr line, only when the session ends while the harness still
// has our stdin open; every end the harness caused is 0.
func (r *relay) run(conn *net.UnixConn, stdin io.Reader) int {
	defer func() {
		r.mu.Lock()
		c := r.conn
		r.mu.Unlock()
		c.Close()
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// A write to a closed stdout would otherwise kill us with SIGPIPE; with the signal
	// caught, it is an EPIPE error, and the harness being gone is a normal end (exit 0).
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	r.conn, r.epoch = conn, 1
	if err := sendPreamble(conn, r.ppid, r.writes, r.maxOutput); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return fail(closedEarly)
		}
		return fail("writing to the daemon: %v", err)
	}
	// The harness's first request can go out while we wait for the reply: the daemon reads it
	// after the preamble.
	stdinDone := make(chan struct{})
	go r.stdinLoop(stdin, stdinDone)
	br, reply, err := readReply(conn)
	switch {
	case err != nil && reply.Error == shuttingDown && r.dialer != nil && r.wait > 0:
		// We reached a daemon as it stopped: it read nothing, so everything goes to the next.
		if err := r.reconnect(&sessionwire.Goodbye{Resmongw: "goodbye", Mode: sessionwire.GoodbyeRestart}); err != nil {
			r.holdStdin()
			r.answerAll(nil, false)
			return fail("%v", err)
		}
	case err != nil:
		return fail("%v", err)
	default:
		r.mu.Lock()
		r.agree(reply)
		r.mu.Unlock()
		go r.readerLoop(br, 1)
	}

	// The harness's death without closing our stdin: its exit where the kernel reports it
	// (procexit.Watch), else a check every parentPoll.
	parentExit, stopWatch := procexit.Watch(r.ppid, func() bool { return os.Getppid() == r.ppid })
	defer stopWatch()
	var parentTick <-chan time.Time
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	pollParent := func() {
		tick = time.NewTicker(parentPoll)
		parentTick = tick.C
	}
	if parentExit == nil {
		pollParent()
	}
	var drain <-chan time.Time
	// A reconnect runs beside this loop, so a signal or the harness's death still ends us at
	// once; the next connection's end waits in r.events until it is done.
	type outcome struct {
		code int
		done bool
	}
	gone := make(chan outcome, 1)
	events := r.events
	for {
		select {
		case ev := <-events:
			r.mu.Lock()
			current := ev.epoch == r.epoch
			r.mu.Unlock()
			if !current {
				continue // a connection we already left
			}
			var hw *harnessWriteError
			if errors.As(ev.err, &hw) {
				return 0 // the harness hung up first: a normal end, and nobody to tell
			}
			events = nil
			go func() { code, done := r.daemonGone(ev); gone <- outcome{code, done} }()
		case o := <-gone:
			if o.done {
				return o.code
			}
			events = r.events
		case <-stdinDone:
			stdinDone = nil
			drain = time.After(hungDaemonWait)
		case <-drain:
			return 0 // the harness hung up and the daemon never closed; don't linger forever
		case <-sigs:
			return 0
		case <-parentExit:
			if os.Getppid() != r.ppid {
				return 0 // reparented: the harness died without closing our stdin
			}
			parentExit = nil // the watch ended without the exit: poll from now on
			pollParent()
		case <-parentTick:
			if os.Getppid() != r.ppid {
				return 0
			}
		}
	}
}

// harnessWriteError is a failed write to the harness's stdout: the harness is gone.
type harnessWriteError struct{ err error }

func (e *harnessWriteError) Error() string { return "writing to the harness: " + e.err.Error() }
