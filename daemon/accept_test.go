package daemon

import (
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// B1: EMFILE and friends are waited out with a backoff and logged, not the end of the daemon:
// after the failures a client is served, and the daemon still exits 0 on a signal.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	socket, ul := testSocket(t)
	const fails = 4
	ln := &flakyListener{UnixListener: ul, err: &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}}
	ln.n.Store(fails)
	d, logs, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() { code <- d.run(sigs, time.Hour) }()

	c, br := dialSession(t, socket)
	if _, err := c.Write([]byte(testkit.InitializeRequest("1", "2025-06-18", "t") + "\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := br.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"result"`) {
		t.Fatalf("initialize after accept errors: %q %v", line, err)
	}
	c.Close()
	if got := logs.FilterMessage("accept failed; retrying").Len(); got != fails {
		t.Errorf("%d retry log lines, want %d", got, fails)
	}
	sigs <- syscall.SIGTERM
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after SIGTERM, want 0", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
}

// B1: a listener that fails for good makes serve exit 1, so systemd/launchd restart it.
func TestListenerFailureExitsNonZero(t *testing.T) {
	socket, ul := testSocket(t)
	ln := &flakyListener{UnixListener: ul, err: &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EINVAL)}}
	ln.n.Store(1)
	d, logs, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- d.run(make(chan os.Signal), time.Hour) }()
	select {
	case c := <-code:
		if c != 1 {
			t.Errorf("exit %d after the listener failed, want 1", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after the listener failed")
	}
	if logs.FilterMessageSnippet("listener stopped unexpectedly").Len() != 1 {
		t.Errorf("no error line for the failed listener: %v", logs.All())
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// B1: a connection whose peer credentials cannot be read (closed under us at shutdown, or a
// peer that hung up) is not "another user".
func TestUnreadablePeerIsNotAnotherUser(t *testing.T) {
	socket, ul := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	defer ul.Close()
	cli, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ul.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // what shutdown does to connections still open
	d.handle(srv)
	if n := logs.FilterMessageSnippet("another user").Len(); n != 0 {
		t.Errorf("a closed connection was logged as another user: %v", logs.All())
	}
	if logs.FilterMessageSnippet("peer credentials unreadable").Len() != 1 {
		t.Errorf("the real error was not logged: %v", logs.All())
	}
}

// M2: the handler count is taken under the lock that shutdown closes, so connections racing
// shutdown never Add to the WaitGroup after Wait began (the race detector checks this).
func TestConnectionsRacingShutdown(t *testing.T) {
	// track itself counts the handler: the Done below would panic (negative counter) if the
	// Add still came afterwards, outside the lock.
	{
		socket, ul := testSocket(t)
		d, _, cancel := newTestDaemon(t, socket, ul)
		a, b := net.Pipe()
		if !d.track(a) {
			t.Fatal("track refused a connection before shutdown")
		}
		d.wg.Done()
		d.untrack(a)
		b.Close()
		ul.Close()
		cancel()
	}
	for round := 0; round < 5; round++ {
		socket, ul := testSocket(t)
		d, _, cancel := newTestDaemon(t, socket, ul)
		served := make(chan struct{})
		go func() { _ = d.serve(); close(served) }()
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		d.shutdown(stopRestart)
		wg.Wait()
		cancel()
		<-served
		if d.track(nil) {
			t.Fatal("track accepted a connection after shutdown")
		}
	}
}
