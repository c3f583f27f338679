package sockio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A Conn behaves as the net.Conn it reads and writes: bytes in order however large, io.EOF
// at the peer's close, deadlines and a closed socket reported as net reports them.

func tcpPair(t *testing.T) (client, server net.Conn) {
	return connPair(t, "tcp", "127.0.0.1:0")
}

func unixPair(t *testing.T) (client, server net.Conn) {
	return connPair(t, "unix", filepath.Join(t.TempDir(), "s"))
}

// connPair is both ends of one connection on a fresh listener at addr.
func connPair(t *testing.T, network, addr string) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	client, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-got
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

func newConn(t *testing.T, c net.Conn) *Conn {
	t.Helper()
	sc := New(c)
	if sc == nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("no raw path for a %T on Linux", c)
		}
		t.Skip("no raw path on " + runtime.GOOS)
	}
	return sc
}

func TestBytesArriveWholeAndInOrder(t *testing.T) {
	for name, pair := range map[string]func(*testing.T) (net.Conn, net.Conn){"tcp": tcpPair, "unix": unixPair} {
		t.Run(name, func(t *testing.T) {
			a, b := pair(t)
			ra, rb := newConn(t, a), newConn(t, b)
			// Far more than a socket buffer holds: the writer waits for the reader.
			msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<18)
			errc := make(chan error, 1)
			go func() {
				n, err := ra.Write(msg)
				if err == nil && n != len(msg) {
					err = io.ErrShortWrite
				}
				if err == nil {
					err = a.(interface{ CloseWrite() error }).CloseWrite()
				}
				errc <- err
			}()
			got, err := io.ReadAll(rb)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("read %d bytes, want %d, equal %v", len(got), len(msg), bytes.Equal(got, msg))
			}
			if n, err := rb.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("after the peer's close: %d, %v; want io.EOF", n, err)
			}
		})
	}
}

func TestDeadlinesAndClosesAreReportedAsNetReportsThem(t *testing.T) {
	a, b := tcpPair(t)
	ra := newConn(t, a)
	_ = a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := ra.Read(make([]byte, 8))
	var oe *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() {
		t.Fatalf("read past its deadline: %v", err)
	}
	_ = a.SetReadDeadline(time.Time{})

	// The peer resets the connection: the error names it.
	_ = b.(*net.TCPConn).SetLinger(0)
	_ = b.Close()
	_, err = ra.Read(make([]byte, 8))
	for err == nil {
		_, err = ra.Read(make([]byte, 8))
	}
	if err != io.EOF && !errors.Is(err, errReset()) {
		t.Fatalf("read after the peer's reset: %v", err)
	}

	_ = a.Close()
	if _, err := ra.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed conn: %v", err)
	}
	if _, err := ra.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on a closed conn: %v", err)
	}
}

func TestConnsWithoutADescriptorAreDeclined(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if New(a) != nil {
		t.Fatal("a pipe end got a raw path")
	}
}

// Writing to a peer that is gone fails with an error (EPIPE or ECONNRESET), and the process
// lives on.
func TestAWriteToAGonePeerFails(t *testing.T) {
	a, b := unixPair(t)
	ra := newConn(t, a)
	_ = b.Close()
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = ra.Write([]byte("after the close"))
	}
	if err == nil || !(errors.Is(err, errPipe()) || errors.Is(err, errReset())) {
		t.Fatalf("write to a closed peer: %v", err)
	}
}
