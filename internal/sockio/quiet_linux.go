package sockio

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Why Quiet: the runtime's poller registers every socket for both readable and writable
// (edge-triggered), and a Unix socket reports "writable" each time its peer reads a message
// it sent: every answer the daemon wrote woke its sleeping thread once more when the shim
// read it, and every request the daemon read woke the shim, for nothing (perf sched: about
// one wake-up in four of the daemon's). A Quiet socket is out of the runtime's poller; it
// waits for readable through an epoll set of its own that watches only that, which the
// runtime polls instead. Writable is watched only while a write waits for room.

// Quiet reads and writes one stream socket through its own epoll sets. Read and Write have
// Conn's semantics and limits (one Read beside one Write); SetReadDeadline and Close are
// safe at any time, and Close unblocks both.
type Quiet struct {
	fd int      // the socket (a duplicate of the one the net.Conn had)
	in *os.File // epoll set watching fd for readable; in the runtime's poller
	// rawReader reads fd when in's RawConn (its rc) reports it readable; opError is the
	// net.Conn's error shape.
	rawReader

	wmu       sync.Mutex // the write side's state
	omu       sync.Mutex // out, which Close reads while a write may hold wmu
	out       *os.File   // epoll set for writable while a write waits for room, else nil
	rawWriter            // writes fd raw
	// wset, wsetErr: writeFirst's results (the set for a wait for room, or why none).
	wset    *os.File
	wsetErr error
	firstFn func(uintptr)

	waitFn func(uintptr) bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// NewQuiet moves c's socket out of the runtime's poller: it returns a Quiet for it and closes
// c (whose descriptor is duplicated first, so the socket stays open), or nil with c untouched
// when c is not a socket this can do that for.
func NewQuiet(c net.Conn) *Quiet {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if rc.Control(func(orig uintptr) {
		n, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, orig, syscall.F_DUPFD_CLOEXEC, 0)
		if e == 0 {
			fd = int(n)
		}
	}) != nil || fd < 0 {
		return nil
	}
	in, err := newEpollSet(fd, syscall.EPOLLIN|syscall.EPOLLRDHUP|-syscall.EPOLLET)
	if err != nil {
		_ = syscall.Close(fd)
		return nil
	}
	irc, err := in.SyscallConn()
	if err != nil {
		_ = in.Close()
		_ = syscall.Close(fd)
		return nil
	}
	local, remote := c.LocalAddr(), c.RemoteAddr()
	q := &Quiet{fd: fd, in: in, rawWriter: rawWriter{fd: fd, write1: rawWrite}}
	q.rawReader.init(irc, fd, func(op string, err error) error {
		if q.closed.Load() && !errors.As(err, new(*syscallError)) {
			err = net.ErrClosed // what a closed net.Conn says (the sets say "use of closed file")
		} else if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return &net.OpError{Op: op, Net: local.Network(), Source: local, Addr: remote, Err: err}
	})
	q.waitFn, q.firstFn = q.writeWaiting, q.writeFirst
	_ = c.Close() // the runtime forgets its descriptor; ours keeps the socket
	return q
}

// newEpollSet is an epoll set watching fd for events, non-blocking, in the runtime's poller.
func newEpollSet(fd int, events int) (*os.File, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	ev := syscall.EpollEvent{Events: uint32(events), Fd: int32(fd)}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		_ = syscall.Close(ep)
		return nil, err
	}
	if err := syscall.SetNonblock(ep, true); err != nil {
		_ = syscall.Close(ep)
		return nil, err
	}
	f := os.NewFile(uintptr(ep), "epoll")
	// Only a file in the runtime's poller takes a deadline (os.ErrNoDeadline otherwise);
	// one that is not would block a thread in every wait.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Write writes all of p like a net.Conn's Write. The first attempt is made at once; only a
// write that finds the socket's buffer full watches it for room, through an epoll set made
// for that wait and closed after it (big answers are rare; a session keeps two descriptors).
func (q *Quiet) Write(p []byte) (int, error) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	q.wbuf, q.wdone, q.werrno = p, 0, 0
	// Control holds the read set open, and Close closes the socket only after it, so the
	// socket cannot be closed (and its number reused) under the write or the set's making.
	// Its callback is a method value made once and its results are fields: a closure here
	// was three allocations per write.
	err := q.rc.Control(q.firstFn)
	out, setErr := q.wset, q.wsetErr
	q.wset, q.wsetErr = nil, nil
	n, werr := q.wdone, q.writeErr()
	if err != nil {
		q.wbuf = nil
		return n, q.opError("write", err)
	}
	if out == nil && setErr == nil {
		q.wbuf = nil
		return n, werr
	}
	if setErr != nil {
		q.wbuf = nil
		return n, q.opError("write", setErr)
	}
	defer func() { q.wbuf = nil }()
	q.omu.Lock()
	if q.closed.Load() {
		q.omu.Unlock()
		_ = out.Close()
		return q.wdone, q.opError("write", net.ErrClosed)
	}
	q.out = out
	q.omu.Unlock()
	err = errors.New("epoll set without a raw connection")
	if orc, oerr := out.SyscallConn(); oerr == nil {
		// The socket was in the set before this wait began, and the callback writes before
		// it reports "wait", so room made at any time is used or reported.
		err = orc.Read(q.waitFn)
	}
	q.omu.Lock()
	q.out = nil
	q.omu.Unlock()
	_ = out.Close()
	if err != nil {
		return q.wdone, q.opError("write", err)
	}
	return q.wdone, q.writeErr()
}

// writeFirst is Write's first attempt, under the read set's Control: what fits is written;
// if the buffer fills, the set that waits for room is made (wset, or wsetErr).
func (q *Quiet) writeFirst(uintptr) {
	if q.writeSome(0) {
		return
	}
	q.wset, q.wsetErr = newEpollSet(q.fd, syscall.EPOLLOUT|-syscall.EPOLLET)
}

// writeWaiting is the poller's callback while a write waits for room.
func (q *Quiet) writeWaiting(uintptr) bool { return q.writeSome(0) } // the fd it gets is the set's: rawWriter writes q.fd

func (q *Quiet) writeErr() error {
	if q.werrno != 0 {
		return q.opError("write", &syscallError{"write", q.werrno})
	}
	return nil
}

// CloseWrite shuts the socket's write side, as a *net.UnixConn's CloseWrite: the peer reads
// EOF while this side can still read its answers.
func (q *Quiet) CloseWrite() error {
	var err error
	// Under the read set's Control, as Write, so the socket cannot be closed under it.
	if cerr := q.rc.Control(func(uintptr) {
		if e := syscall.Shutdown(q.fd, syscall.SHUT_WR); e != nil {
			err = e
			if errno, ok := e.(syscall.Errno); ok {
				err = &syscallError{"shutdown", errno}
			}
		}
	}); cerr != nil {
		return q.opError("close", cerr)
	}
	if err != nil {
		return q.opError("close", err)
	}
	return nil
}

// SetReadDeadline bounds the Read in progress and later ones, as on a net.Conn.
func (q *Quiet) SetReadDeadline(t time.Time) error { return q.in.SetReadDeadline(t) }

// Close closes the socket once; a Read or Write blocked on it returns net.ErrClosed.
func (q *Quiet) Close() error {
	q.closeOnce.Do(func() {
		q.closed.Store(true)
		// Each set's Close returns once no callback of it runs (a non-blocking os.File
		// waits for its last user), so the socket is closed after every use of it.
		q.closeErr = q.in.Close()
		q.omu.Lock()
		out := q.out
		q.omu.Unlock()
		if out != nil {
			_ = out.Close()
		}
		if err := syscall.Close(q.fd); q.closeErr == nil {
			q.closeErr = err
		}
	})
	return q.closeErr
}
