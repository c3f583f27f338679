package sockio

import (
	"io"
	"net"
	"syscall"
)

// Why: every read(2) and write(2) a net.Conn makes goes through the runtime's entersyscall,
// and the first one after the process was idle wakes the runtime's monitor thread (sysmon),
// which then polls every 20 µs until the process is idle again. A daemon that serves one
// short call at a time is idle between every two syscalls, so with GOMAXPROCS=1 that thread's
// wake-ups and sleeps were a quarter of its CPU per call (perf, issue 12 B). A socket in the
// runtime's poller is non-blocking, so its reads and writes return at once and need none of
// that bookkeeping; the poller still does the waiting, and deadlines work as on the net.Conn.

// Conn reads and writes one socket through its raw descriptor; Read and Write have
// net.Conn's semantics (io.EOF at the end, deadlines, *net.OpError errors). A Read may run
// beside a Write, but not beside another Read, nor a Write beside another Write: each keeps
// its state in the Conn, so the poller's callback is made once, not per call.
type Conn struct {
	nc net.Conn
	rc syscall.RawConn

	readFn  func(fd uintptr) bool
	rbuf    []byte
	rn      int
	rerrno  syscall.Errno
	writeFn func(fd uintptr) bool
	wbuf    []byte
	wdone   int
	werrno  syscall.Errno
}

// New returns a Conn for c, or nil when c has no raw descriptor (then use c itself).
func New(c net.Conn) *Conn {
	sc, ok := c.(syscall.Conn)
	if !ok || !supported {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	sio := &Conn{nc: c, rc: rc}
	sio.readFn, sio.writeFn = sio.read, sio.write
	return sio
}

// Read reads into p like c.Read.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rbuf, c.rn, c.rerrno = p, 0, 0
	err := c.rc.Read(c.readFn)
	n, errno := c.rn, c.rerrno
	c.rbuf = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", &syscallError{"read", errno})
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is the poller's callback for Read: false means "not ready, wait".
func (c *Conn) read(fd uintptr) bool {
	for {
		n, errno := rawRead(fd, c.rbuf)
		switch errno {
		case 0:
			if n > 0 {
				acquired(fd)
			}
			c.rn = n
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // not ready: the poller waits (within the read deadline)
		}
		c.rerrno = errno
		return true
	}
}

// Write writes all of p like c.Write.
func (c *Conn) Write(p []byte) (int, error) {
	c.wbuf, c.wdone, c.werrno = p, 0, 0
	err := c.rc.Write(c.writeFn)
	done, errno := c.wdone, c.werrno
	c.wbuf = nil
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", &syscallError{"write", errno})
	}
	return done, nil
}

// write is the poller's callback for Write: false means "the socket's buffer is full, wait".
func (c *Conn) write(fd uintptr) bool {
	released(fd)
	for c.wdone < len(c.wbuf) {
		n, errno := rawWrite(fd, c.wbuf[c.wdone:])
		switch errno {
		case 0:
			c.wdone += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werrno = errno
			return true
		}
	}
	return true
}

func (c *Conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		// The raw connection's own errors (closed, deadline) come as "raw-read"/"raw-write".
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: c.nc.LocalAddr().Network(), Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(), Err: err}
}

// syscallError is os.SyscallError's shape (errors.Is reaches the errno through Unwrap).
type syscallError struct {
	call  string
	errno syscall.Errno
}

func (e *syscallError) Error() string { return e.call + ": " + e.errno.Error() }
func (e *syscallError) Unwrap() error { return e.errno }
func (e *syscallError) Timeout() bool { return e.errno.Timeout() }
