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
// net.Conn's semantics (io.EOF at the end, deadlines, *net.OpError errors).
type Conn struct {
	nc net.Conn
	rc syscall.RawConn
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
	return &Conn{nc: c, rc: rc}
}

// Read reads into p like c.Read.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = rawRead(fd, p)
			if errno == 0 && n > 0 {
				acquired(fd)
			}
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // not ready: the poller waits (within the read deadline)
			}
			return true
		}
	})
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

// Write writes all of p like c.Write.
func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		released(fd)
		for done < len(p) {
			var n int
			n, errno = rawWrite(fd, p[done:])
			switch errno {
			case 0:
				done += n
				continue
			case syscall.EINTR:
				errno = 0
				continue
			case syscall.EAGAIN:
				errno = 0
				return false // the socket's buffer is full: the poller waits
			}
			return true
		}
		return true
	})
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", &syscallError{"write", errno})
	}
	return done, nil
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
