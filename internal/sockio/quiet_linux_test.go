package sockio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A Quiet socket behaves as the net.Conn it replaces (bytes, EOF, deadline, close), and its
// wait for readable is not woken by the peer reading what it wrote.

func newQuiet(t *testing.T, c net.Conn) *Quiet {
	t.Helper()
	q := NewQuiet(c)
	if q == nil {
		t.Fatalf("no Quiet for a %T", c)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

// readyEvents is what the Quiet's read set reports now, without waiting.
func readyEvents(t *testing.T, q *Quiet) int {
	t.Helper()
	rc, err := q.in.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	var eerr error
	if err := rc.Control(func(ep uintptr) {
		n, eerr = syscall.EpollWait(int(ep), make([]syscall.EpollEvent, 4), 0)
	}); err != nil || eerr != nil {
		t.Fatal(err, eerr)
	}
	return n
}

func TestQuietCarriesBytesBothWaysAndEOF(t *testing.T) {
	peer, c := unixPair(t)
	q := newQuiet(t, c)
	// Far more than the socket buffer: the write waits for room (its own epoll set) and the
	// read for data.
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<18)
	errc := make(chan error, 1)
	go func() {
		n, err := q.Write(msg)
		if err == nil && n != len(msg) {
			err = io.ErrShortWrite
		}
		errc <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("write: %v, bytes equal %v", err, bytes.Equal(got, msg))
	}
	go func() {
		_, err := peer.Write(msg)
		if err == nil {
			err = peer.(*net.UnixConn).CloseWrite()
		}
		errc <- err
	}()
	back, err := io.ReadAll(q)
	if err != nil || !bytes.Equal(back, msg) {
		t.Fatalf("read %d bytes, %v; want %d", len(back), err, len(msg))
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n, err := q.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after the peer's close: %d, %v; want io.EOF", n, err)
	}
}

// The point of Quiet: the peer reading an answer makes the socket writable, which the
// runtime's poller would report (and wake the process for); the read set stays silent.
func TestQuietIsNotWokenByThePeerReading(t *testing.T) {
	peer, c := unixPair(t)
	q := newQuiet(t, c)
	if _, err := q.Write([]byte("answer\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(peer, make([]byte, 7)); err != nil {
		t.Fatal(err)
	}
	if n := readyEvents(t, q); n != 0 {
		t.Fatalf("the read set reports %d events after the peer read, want none", n)
	}
	if _, err := peer.Write([]byte("request\n")); err != nil {
		t.Fatal(err)
	}
	if n := readyEvents(t, q); n != 1 {
		t.Fatalf("the read set reports %d events with a request waiting, want 1", n)
	}
}

func TestQuietDeadlinesAndClosesAreReportedAsNetReportsThem(t *testing.T) {
	_, c := unixPair(t)
	q := newQuiet(t, c)
	if err := c.Close(); err == nil {
		t.Fatal("the net.Conn was left open: its descriptor is still in the runtime's poller")
	}
	_ = q.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := q.Read(make([]byte, 8))
	var oe *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() {
		t.Fatalf("read past its deadline: %v", err)
	}
	_ = q.SetReadDeadline(time.Time{})

	readErr := make(chan error, 1)
	go func() {
		_, err := q.Read(make([]byte, 8))
		readErr <- err
	}()
	_ = q.Close()
	if err := <-readErr; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read blocked at the close: %v", err)
	}
	if _, err := q.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed socket: %v", err)
	}
	if _, err := q.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on a closed socket: %v", err)
	}
}

// A write waiting for room (the peer reads nothing) returns at the close.
func TestQuietCloseEndsAWriteWaitingForRoom(t *testing.T) {
	_, c := unixPair(t)
	q := newQuiet(t, c)
	errc := make(chan error, 1)
	go func() {
		_, err := q.Write(make([]byte, 64<<20))
		errc <- err
	}()
	// The write is waiting once the socket's buffer is full; Close ends it either way.
	for {
		q.omu.Lock()
		waiting := q.out != nil
		q.omu.Unlock()
		if waiting {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("the write ended before the close: %v", err)
		default:
		}
		runtime.Gosched()
	}
	_ = q.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write waiting at the close: %v", err)
	}
}

func TestQuietDeclinesConnsWithoutADescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if NewQuiet(a) != nil {
		t.Fatal("a pipe end got a Quiet")
	}
}

// CloseWrite is a half-close: the peer reads EOF, and this side still reads what the peer
// sends after it (the shim's stdin EOF while answers are still owed).
func TestQuietCloseWriteIsAHalfClose(t *testing.T) {
	peer, c := unixPair(t)
	q := newQuiet(t, c)
	if _, err := q.Write([]byte("last request\n")); err != nil {
		t.Fatal(err)
	}
	if err := q.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(peer)
	if err != nil || string(got) != "last request\n" {
		t.Fatalf("the peer read %q, %v; want the line then EOF", got, err)
	}
	if _, err := peer.Write([]byte("its answer\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := q.Read(buf)
	if err != nil || string(buf[:n]) != "its answer\n" {
		t.Fatalf("after CloseWrite: read %q, %v", buf[:n], err)
	}
	if _, err := q.Write([]byte("x")); err == nil {
		t.Fatal("a write after CloseWrite succeeded")
	}
	_ = q.Close()
	if err := q.CloseWrite(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("CloseWrite after Close: %v, want net.ErrClosed", err)
	}
}
