package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/resmongw/resmongw/sessionwire"
)

// errStopping: the session is draining for a graceful stop.
var errStopping = errors.New("the daemon is stopping")

// stop begins a graceful stop of the session (issue 12): no further call is read, the ones
// running are answered, then a client that speaks the session protocol gets a goodbye line
// (mode "restart" or "stop") and the stream ends. A Read blocked on the socket is woken
// through a past read deadline; whatever it had half read was not started.
func (c *lineConn) stop(mode string) {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopMode = mode
		c.mu.Unlock()
		close(c.stopping)
		_ = c.c.SetReadDeadline(time.Unix(1, 0))
	})
}

func (c *lineConn) isStopping() bool {
	select {
	case <-c.stopping:
		return true
	default:
		return false
	}
}

// finish is the end of a stopped session's reading: it waits (within the drain bound) for the
// answers still owed, says goodbye listing any call still running, and ends the stream.
func (c *lineConn) finish(ctx context.Context) error {
	c.waitIdle(ctx)
	if !c.goodbye {
		return io.EOF // an older shim: it sees the end of the stream, as it always did
	}
	c.mu.Lock()
	mode := c.stopMode
	var abandoned []json.RawMessage
	for id := range c.pending {
		abandoned = append(abandoned, appendID(nil, id))
	}
	c.mu.Unlock()
	c.writeLine(sessionwire.GoodbyeLine(mode, abandoned))
	return io.EOF
}
