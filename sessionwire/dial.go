package sessionwire

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Dial connects to the daemon at socket only where it can be ours (issue 10.4): the socket's
// directory is checked before connecting (a real directory, ours, writable by nobody else)
// and the listener's uid right after, both before a byte is written, since whatever a client
// sends next (the preamble carries HOME and the state dir; a session carries the calls' arguments)
// must reach our own daemon only. Every client of the socket dials through here: the shim,
// status, stop and restart. A refusal is an ErrRefused error, never one IsDown accepts, so
// no autostart or "not running" hides it.
func Dial(socket string) (*net.UnixConn, error) {
	if err := checkSocketDir(socket); err != nil {
		return nil, err
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c, socket); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// IsDown reports whether a Dial error means nobody serves the socket (no file, or nobody
// listening on it).
func IsDown(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// ErrRefused marks a socket Dial will not trust: waiting or retrying cannot make it ours, so a
// client ends at once and says why (the error's text, one sentence ending "nothing was sent").
var ErrRefused = errors.New("refused")

type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrRefused }

func refusef(format string, a ...any) error { return &refusedError{fmt.Sprintf(format, a...)} }

// DialUntil dials socket (Dial) until it connects, an error retry does not accept ends it at
// once, or limit has passed (the last error then), backing off from 10 ms to 200 ms: a daemon
// being started or re-listening serves within moments, and a refusal cannot change by waiting.
func DialUntil(socket string, limit time.Duration, retry func(error) bool) (*net.UnixConn, error) {
	deadline := time.Now().Add(limit)
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 200*time.Millisecond) {
		c, err := Dial(socket)
		if err == nil || !retry(err) || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(backoff)
	}
}
