package sockio

import (
	"io"
	"net"
	"os"
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
	rawReader // rc, opError (the error shape of what was wrapped), and Read
	rawWriter
	writeFn func(fd uintptr) bool
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
	return wrapRaw(rc, rawWrite, func(op string, err error) error {
		return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	})
}

// NewFile returns a Conn for f, a pipe the runtime's poller waits on (opened non-blocking),
// or nil for anything else (then use f itself): a blocking descriptor read raw would hold the
// thread, and with one P the whole process, until data came. Errors are *os.PathError, as f's.
func NewFile(f *os.File) *Conn {
	if !supported {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	pollable := false
	_ = rc.Control(func(fd uintptr) { pollable = isNonblockingPipe(fd) })
	if !pollable {
		return nil
	}
	return wrapRaw(rc, rawWriteFile, func(op string, err error) error {
		return &os.PathError{Op: op, Path: f.Name(), Err: err}
	})
}

// ReadWriter is c's bytes through a Conn where c has a raw descriptor, else c itself.
func ReadWriter(c net.Conn) io.ReadWriter {
	if sc := New(c); sc != nil {
		return sc
	}
	return c
}

// FileReadWriter is f's bytes through a Conn where f is a polled pipe, else f itself.
func FileReadWriter(f *os.File) io.ReadWriter {
	if sc := NewFile(f); sc != nil {
		return sc
	}
	return f
}

func wrapRaw(rc syscall.RawConn, write1 func(uintptr, []byte) (int, syscall.Errno), shape func(string, error) error) *Conn {
	c := &Conn{rawWriter: rawWriter{fd: -1, write1: write1}}
	c.rawReader.init(rc, -1, func(op string, err error) error {
		if oe, ok := err.(*net.OpError); ok {
			// The raw connection's own errors (closed, deadline) come as "raw-read"/"raw-write".
			err = oe.Err
		} else if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return shape(op, err)
	})
	c.writeFn = c.write
	return c
}

// rawReader is Read through a RawConn whose callback reads a descriptor raw, with the state
// the callback fills kept here (and the callback made once), so a Read costs no closure.
// Conn reads the descriptor its RawConn hands the callback; Quiet a socket whose readiness
// its epoll set's RawConn reports.
type rawReader struct {
	rc      syscall.RawConn
	fd      int // the descriptor read; -1: the one rc gives the callback
	opError func(op string, err error) error
	fn      func(fd uintptr) bool
	buf     []byte
	n       int
	errno   syscall.Errno
}

func (r *rawReader) init(rc syscall.RawConn, fd int, opError func(string, error) error) {
	r.rc, r.fd, r.opError, r.fn = rc, fd, opError, r.read
}

// Read reads into p like a net.Conn's Read.
func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.buf, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.fn)
	n, errno := r.n, r.errno
	r.buf = nil
	switch {
	case err != nil:
		return 0, r.opError("read", err)
	case errno != 0:
		return 0, r.opError("read", &syscallError{"read", errno})
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is the poller's callback for Read: false means "not ready, wait".
func (r *rawReader) read(given uintptr) bool {
	fd := given
	if r.fd >= 0 {
		fd = uintptr(r.fd)
	}
	for {
		n, errno := rawRead(fd, r.buf)
		switch errno {
		case 0:
			if n > 0 {
				acquired(fd)
			}
			r.n = n
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // not ready: the poller waits (within the read deadline)
		}
		r.errno = errno
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
func (c *Conn) write(fd uintptr) bool { return c.writeSome(fd) }

// rawWriter is a write of all of wbuf, as far as it goes without waiting, to a descriptor
// raw: the state a poller callback fills (Conn's, and Quiet's first attempt and its wait
// for room).
type rawWriter struct {
	fd     int // the descriptor written; -1: the one the callback is given
	write1 func(fd uintptr, p []byte) (int, syscall.Errno)
	wbuf   []byte
	wdone  int
	werrno syscall.Errno
}

// writeSome writes what it can of wbuf; false means the buffer is full.
func (w *rawWriter) writeSome(given uintptr) bool {
	fd := given
	if w.fd >= 0 {
		fd = uintptr(w.fd)
	}
	released(fd)
	for w.wdone < len(w.wbuf) {
		n, errno := w.write1(fd, w.wbuf[w.wdone:])
		switch errno {
		case 0:
			w.wdone += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			w.werrno = errno
			return true
		}
	}
	return true
}

// syscallError is os.SyscallError's shape (errors.Is reaches the errno through Unwrap).
type syscallError struct {
	call  string
	errno syscall.Errno
}

func (e *syscallError) Error() string { return e.call + ": " + e.errno.Error() }
func (e *syscallError) Unwrap() error { return e.errno }
func (e *syscallError) Timeout() bool { return e.errno.Timeout() }
