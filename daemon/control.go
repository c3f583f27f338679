package daemon

import (
	"net"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// heldUntilExit keeps a duplicate of every accepted control connection open until Run has
// shut down and released the lock (or, should Run never get there, until the process exits),
// so the client that asked for the stop reads EOF only once a new daemon can take over.
// Referenced here so the GC never closes them early.
var heldUntilExit struct {
	sync.Mutex
	files []*os.File
}

// releaseHeld closes the held control connections: their askers see EOF now.
func releaseHeld() {
	heldUntilExit.Lock()
	defer heldUntilExit.Unlock()
	for _, f := range heldUntilExit.files {
		f.Close()
	}
	heldUntilExit.files = nil
}

// control answers a stop or restart request and hands it to run. It reaches here only after
// the peer check in handle: the same user as the daemon, like every connection.
func (d *daemon) control(c *net.UnixConn, kind string, pid int) {
	mode := stopEnd
	if kind == sessionwire.KindRestart {
		mode = stopRestart
	}
	if f, err := c.File(); err == nil {
		heldUntilExit.Lock()
		heldUntilExit.files = append(heldUntilExit.files, f)
		heldUntilExit.Unlock()
	}
	reply := sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true, Version: version.Version, StopWithinMS: shutdownBound(d.upstream).Milliseconds()}
	d.mu.Lock()
	if d.idle != nil {
		reply.ExitWhenIdleMS = d.idle.after.Milliseconds()
	}
	d.mu.Unlock()
	if _, err := c.Write(sessionwire.Line(reply)); err != nil {
		return // the asker is gone: it did not see an answer, so nothing happens
	}
	d.log.Info("asked over the socket to "+mode.String(), zap.Int("pid", pid))
	d.requestStop(mode)
}
