package daemonctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/sessionwire"
)

// ErrNotRunning: no daemon serves the socket.
var ErrNotRunning = errors.New("no daemon is running")

// Stopped is what Control learnt of the daemon it stopped.
type Stopped struct {
	PID     int
	Version string
	// ExitWhenIdle is the daemon's idle period (0: it stayed until asked), so a restart can
	// bring back the same kind of daemon.
	ExitWhenIdle time.Duration
}

// Control asks the daemon at socket to stop or restart (sessionwire.KindStop, KindRestart) and
// waits until it has shut down and released its lock: up to limit, or longer when the daemon
// says its shutdown may take longer (Reply.StopWithinMS, plus lockMargin). It returns what the
// daemon said of itself, or ErrNotRunning when nobody serves the socket.
func Control(socket, kind string, limit time.Duration) (Stopped, error) {
	st := Stopped{PID: sessionwire.LockHolder(socket)}
	c, err := sessionwire.Dial(socket) // the preamble goes only to a daemon of ours
	if err != nil {
		if sessionwire.IsDown(err) {
			return Stopped{}, ErrNotRunning
		}
		return Stopped{}, err
	}
	defer c.Close()
	// The daemon answers at once; limit (or the bound it states) is for what follows.
	_ = c.SetDeadline(time.Now().Add(max(limit, controlReplyWait)))
	// A daemon that refuses us (another user's) closes at once, so the write can already fail.
	closed := errors.New("the daemon closed the connection without answering (is it another user's daemon?)")
	if _, err := c.Write(sessionwire.Line(sessionwire.NewPreamble(kind, func(string) string { return "" }, "resmongw "+kind))); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return st, closed
		}
		return st, fmt.Errorf("asking the daemon: %w", err)
	}
	br := bufio.NewReader(c)
	reply, err := sessionwire.ReadReply(br)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return st, closed
	case err != nil:
		return st, fmt.Errorf("no answer from the daemon: %w", err)
	case !reply.OK && st.PID > 0 && strings.Contains(reply.Error, "unknown preamble kind"):
		// A daemon from before control requests (the usual case right after an upgrade):
		// SIGTERM, which every version handles as a restart, then wait for its lock.
		c.Close()
		if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
			return st, fmt.Errorf("the daemon (pid %d) predates stop/restart requests and SIGTERM failed: %w", st.PID, err)
		}
		st.Version = "older"
		return st, waitLockFree(socket, limit)
	case !reply.OK:
		st.Version = reply.Version
		return st, fmt.Errorf("the daemon refused: %s", reply.Error)
	}
	st.Version = reply.Version
	st.ExitWhenIdle = time.Duration(reply.ExitWhenIdleMS) * time.Millisecond
	// Accepted: the connection stays open until the daemon has shut down.
	if within := time.Duration(reply.StopWithinMS)*time.Millisecond + lockMargin; within > limit {
		limit = within
	}
	_ = c.SetDeadline(time.Now().Add(limit))
	if _, err := io.Copy(io.Discard, br); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return st, fmt.Errorf("the daemon (pid %d) accepted but is still running after %v", st.PID, limit)
		}
		if !errors.Is(err, syscall.ECONNRESET) {
			return st, err
		}
	}
	return st, nil
}

// controlReplyWait bounds the wait for a daemon's answer to a control request.
const controlReplyWait = 5 * time.Second

// lockMargin is Control's allowance, past the shutdown bound the daemon states, for it to
// release its lock and close the connection.
const lockMargin = 5 * time.Second

// WaitServing dials socket until a daemon of ours accepts or limit passes: after a start,
// the daemon is up when it serves, not when its process exists. A socket sessionwire.Dial
// refuses is the error at once (waiting cannot make it ours).
func WaitServing(socket string, limit time.Duration) error {
	c, err := sessionwire.DialUntil(socket, limit, func(err error) bool { return !errors.Is(err, sessionwire.ErrRefused) })
	switch {
	case err == nil:
		c.Close()
		return nil
	case errors.Is(err, sessionwire.ErrRefused):
		return err
	}
	return fmt.Errorf("no daemon listening on %s after %v: %w", socket, limit, err)
}

// waitLockFree waits, up to limit, until no live daemon holds socket's lock.
func waitLockFree(socket string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for backoff := 10 * time.Millisecond; sessionwire.LockHolder(socket) > 0; backoff = min(2*backoff, 200*time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon is still running after %v", limit)
		}
		time.Sleep(backoff)
	}
	return nil
}
