package shim

import (
	"io"
	"net"

	"github.com/resmongw/resmongw/internal/sockio"
)

// Why raw I/O: every read(2) and write(2) through a net.Conn or an *os.File goes through the
// runtime's syscall bookkeeping, and the first one after the process was idle wakes the
// runtime's monitor thread (sysmon), which then polls every 20 µs until the process is idle
// again. The shim is idle between every two lines, so that was a large part of its CPU per
// call (the daemon's was cut the same way, see internal/sockio). The runtime's poller still
// does every wait; only descriptors that are in it (the daemon's socket, the harness's pipes
// as polledStdin and polledStdout reopen them) are read raw, anything else as it is.

// daemonConn is the connection to the daemon, read and written through sockio where it can
// be. One goroutine reads it at a time (the reply, then readerLoop) and writes hold wmu.
type daemonConn struct {
	*net.UnixConn
	rw io.ReadWriter // the raw descriptor's Conn, or the UnixConn itself
}

func newDaemonConn(c *net.UnixConn) *daemonConn {
	return &daemonConn{UnixConn: c, rw: sockio.ReadWriter(c)}
}

func (c *daemonConn) Read(p []byte) (int, error)  { return c.rw.Read(p) }
func (c *daemonConn) Write(p []byte) (int, error) { return c.rw.Write(p) }
