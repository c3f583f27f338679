package shim

import (
	"io"
	"net"
	"time"

	"github.com/resmongw/resmongw/internal/sockio"
)

// Why raw I/O: every read(2) and write(2) through a net.Conn or an *os.File goes through the
// runtime's syscall bookkeeping, and the first one after the process was idle wakes the
// runtime's monitor thread (sysmon), which then polls every 20 µs until the process is idle
// again. The shim is idle between every two lines, so that was a large part of its CPU per
// call (the daemon's was cut the same way, see internal/sockio). The runtime's poller still
// does every wait; only descriptors that are in it (the daemon's socket, the harness's pipes
// as polledStdin and polledStdout reopen them) are read raw, anything else as it is.

// daemonConn is the connection to the daemon. Where it can be (Linux), its socket is out of
// the runtime's poller (sockio.Quiet): the poller watches a socket for writable too, and the
// daemon reading each request made the shim's socket writable, which woke the shim for
// nothing once per call; a Quiet socket is waited on for readable only. Elsewhere it is read
// and written through sockio where it can be. One goroutine reads it at a time (the reply,
// then readerLoop) and writes hold wmu.
type daemonConn struct {
	uc     *net.UnixConn // the connection, unless its socket moved to q
	q      *sockio.Quiet
	rw     io.ReadWriter
	remote net.Addr
}

func newDaemonConn(c *net.UnixConn) *daemonConn {
	d := &daemonConn{uc: c, remote: c.RemoteAddr()}
	if q := sockio.NewQuiet(c); q != nil {
		d.uc, d.q, d.rw = nil, q, q
	} else {
		d.rw = sockio.ReadWriter(c)
	}
	return d
}

func (c *daemonConn) Read(p []byte) (int, error)  { return c.rw.Read(p) }
func (c *daemonConn) Write(p []byte) (int, error) { return c.rw.Write(p) }

// RemoteAddr is the daemon's socket address, for messages.
func (c *daemonConn) RemoteAddr() net.Addr { return c.remote }

func (c *daemonConn) SetReadDeadline(t time.Time) error {
	if c.q != nil {
		return c.q.SetReadDeadline(t)
	}
	return c.uc.SetReadDeadline(t)
}

// CloseWrite half-closes: the daemon reads EOF and still owes the answers in flight.
func (c *daemonConn) CloseWrite() error {
	if c.q != nil {
		return c.q.CloseWrite()
	}
	return c.uc.CloseWrite()
}

func (c *daemonConn) Close() error {
	if c.q != nil {
		return c.q.Close()
	}
	return c.uc.Close()
}
