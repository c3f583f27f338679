// Package shim is `resmongw stdio`: a tiny stdlib-only pipe between a harness's stdio and the daemon's socket.
package shim

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// Bounds on waiting. A harness such as Codex gives a server 10 s to answer initialize, so the
// whole connect path (autostart included) must fit well inside that.
const (
	autostartWait = 3 * time.Second // how long to retry dialling a daemon we (or a sibling) started
	replyWait     = 5 * time.Second // how long the daemon may take to accept the preamble
	parentPoll    = time.Second     // how often to check that our parent is still alive
	// relistenWait is how long to keep dialling when the socket file is missing but a live
	// daemon holds the lock: it re-creates the socket at its next check (every 2 s).
	relistenWait = 5 * time.Second
)

// hungDaemonWait bounds how long answers may still flow after the harness closed stdin. The
// daemon itself bounds that drain (from its request timeout) and then closes, which is what
// normally ends us; this is only the safety net against a daemon that never does. A var so a
// test can shorten it.
var hungDaemonWait = 10 * time.Minute

// Main runs the shim. Its stdout carries protocol bytes only; every diagnostic is one stderr line.
func Main(args []string) int {
	fs := flag.NewFlagSet("resmongw stdio", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	socketFlag := fs.String("socket", "", "daemon socket path (default: $"+paths.SocketEnv+" or the per-user default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		// A harness config with a stray argument would otherwise run with it ignored.
		fmt.Fprintf(os.Stderr, "resmongw stdio: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	path, err := paths.Socket(*socketFlag, os.Getenv)
	if err != nil {
		return fail("%v", err)
	}
	// An explicit socket means a private daemon, which the per-user service does not serve.
	explicit := *socketFlag != "" || os.Getenv(paths.SocketEnv) != ""
	conn, err := connect(path, os.Getenv(endpoint.NoAutostartEnv) != "1", !explicit)
	if err != nil {
		return fail("%v", err)
	}
	return run(conn, os.Stdin, os.Stdout)
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "resmongw stdio: "+format+"\n", a...)
	return 1
}

// daemonDown reports whether a dial error means nobody is serving the socket.
func daemonDown(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// connect dials the daemon, starting it when it is not running and autostart is allowed. On
// the default socket an installed per-user service is started rather than a second,
// unmanaged daemon (which would make the service's own `serve` fail with "already running"
// and restart-loop); when that fails, the daemon is spawned directly.
func connect(path string, autostart, viaService bool) (*net.UnixConn, error) {
	conn, err := dial(path)
	if err == nil || !daemonDown(err) {
		return conn, err
	}
	if errors.Is(err, syscall.ENOENT) {
		if pid := endpoint.LockHolder(path); pid > 0 {
			// A daemon runs but its socket file was removed: it listens again shortly.
			// Starting a second one would only fail on the lock.
			if conn, err := dialUntil(path, relistenWait); err == nil || !daemonDown(err) {
				return conn, err
			}
			return nil, errors.New(endpoint.SocketGone(pid, path))
		}
	}
	if !autostart {
		return nil, fmt.Errorf("the daemon is not running (no socket at %s); start it with 'resmongw serve' or install the service with 'resmongw install'", path)
	}
	if viaService && startService(os.Getenv) {
		if conn, err := dialUntil(path, autostartWait); err == nil || !daemonDown(err) {
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
	if err == nil || !daemonDown(err) {
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

// dialUntil dials with backoff while nobody serves the socket, for at most limit.
func dialUntil(path string, limit time.Duration) (*net.UnixConn, error) {
	deadline := time.Now().Add(limit)
	for backoff := 10 * time.Millisecond; ; backoff = min(backoff*2, 200*time.Millisecond) {
		conn, err := dial(path)
		if err == nil || !daemonDown(err) || time.Now().After(deadline) {
			return conn, err
		}
		time.Sleep(backoff)
	}
}

// dial connects to the daemon only where it can be ours (issue 10.4): the socket's directory
// is checked before connecting and the listener's uid right after, both before a byte is
// written, since the preamble carries the harness's environment and the calls their
// arguments. A refusal is an error that is not daemonDown, so no autostart hides it.
func dial(path string) (*net.UnixConn, error) {
	if err := checkSocketDir(path); err != nil {
		return nil, err
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c, path); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// closedEarly is what the daemon's silence means: it refuses peers of another user without a
// word, and a daemon that is shutting down closes too.
const closedEarly = "the daemon closed the connection without answering (is it another user's daemon? see its log)"

// daemonEnded is the one line a harness's log shows when the daemon goes away under a session.
const daemonEnded = "the daemon ended this session (it stopped or restarted); restart this MCP server to reconnect"

// run sends the preamble, checks the daemon's reply, then copies bytes both ways until the
// daemon closes the stream, a signal arrives, or our parent goes away. The exit code is 1,
// with one stderr line, only when the daemon ends the session while the harness still has
// our stdin open; every end the harness caused (stdin closed, stdout closed, a signal, its
// death) is 0.
func run(conn *net.UnixConn, stdin io.Reader, stdout io.Writer) int {
	defer conn.Close()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// A write to a closed stdout would otherwise kill us with SIGPIPE; with the signal
	// caught, it is an EPIPE error, and the harness being gone is a normal end (exit 0).
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	ppid := os.Getppid()
	pre := endpoint.NewPreamble(endpoint.KindMCP, os.Getenv, parentArgv0(ppid))
	if _, err := conn.Write(endpoint.Line(pre)); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return fail(closedEarly)
		}
		return fail("writing to the daemon: %v", err)
	}

	// The harness's first request can go out while we wait for the reply: the daemon reads it
	// after the preamble. Half-close on stdin EOF so the daemon sees the end of the session.
	// stdinClosed is set before the half-close, so it is visible by the time the daemon,
	// having drained, closes its side.
	var stdinClosed atomic.Bool
	stdinDone := make(chan struct{})
	go func() {
		_, err := io.Copy(daemonWriter{conn}, stdin)
		var dw *daemonWriteError
		if errors.As(err, &dw) {
			return // the daemon's side is gone; the reader below reports it
		}
		stdinClosed.Store(true)
		_ = conn.CloseWrite()
		close(stdinDone)
	}()

	br := bufio.NewReaderSize(conn, 4096)
	_ = conn.SetReadDeadline(time.Now().Add(replyWait))
	reply, err := endpoint.ReadReply(br)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return fail(closedEarly)
	case errors.Is(err, endpoint.ErrNotAReply):
		return fail("unexpected first line from the daemon (is %s a resmongw socket?)", conn.RemoteAddr())
	case err != nil:
		return fail("no answer from the daemon: %v", err)
	}
	if !reply.OK {
		return fail("the daemon refused the session: %s", reply.Error)
	}
	_ = conn.SetReadDeadline(time.Time{})

	outDone := make(chan error, 1)
	go func() { outDone <- copyToHarness(stdout, br) }()

	tick := time.NewTicker(parentPoll)
	defer tick.Stop()
	var drain <-chan time.Time
	for {
		select {
		case err := <-outDone:
			var hw *harnessWriteError
			if errors.As(err, &hw) || stdinClosed.Load() {
				return 0 // the harness hung up first: a normal end, and nobody to tell
			}
			// The daemon ended the session (EOF, or a reset when it was killed) while the
			// harness still talks to us: this MCP server is gone, say so.
			return fail(daemonEnded)
		case <-stdinDone:
			stdinDone = nil
			drain = time.After(hungDaemonWait)
		case <-drain:
			return 0 // the harness hung up and the daemon never closed; don't linger forever
		case <-sigs:
			return 0
		case <-tick.C:
			if os.Getppid() != ppid {
				return 0 // reparented: the harness died without closing our stdin
			}
		}
	}
}

// copyToHarness copies the daemon's frames to the harness until either side ends; write
// errors come back as *harnessWriteError. A plain read/write loop rather than io.Copy, which
// would splice and blur which side failed.
func copyToHarness(stdout io.Writer, daemon io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := daemon.Read(buf)
		if n > 0 {
			if _, err := stdout.Write(buf[:n]); err != nil {
				return &harnessWriteError{err}
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
}

type harnessWriteError struct{ err error }

func (e *harnessWriteError) Error() string { return "writing to the harness: " + e.err.Error() }

// daemonWriter tags errors writing to the daemon, so the stdin copier can tell them from the
// harness closing stdin.
type daemonWriter struct{ c *net.UnixConn }

func (w daemonWriter) Write(p []byte) (int, error) {
	n, err := w.c.Write(p)
	if err != nil {
		return n, &daemonWriteError{err}
	}
	return n, nil
}

type daemonWriteError struct{ err error }

func (e *daemonWriteError) Error() string { return "writing to the daemon: " + e.err.Error() }
