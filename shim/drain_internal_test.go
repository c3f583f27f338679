package shim

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// fakeDaemon accepts one connection, takes the preamble and one request, waits for the
// shim's half-close (stdin EOF), then waits for gate before answering (or, with answer
// false, never answers nor closes until the test ends).
type fakeDaemon struct {
	sawEOF chan struct{}
	gate   chan struct{}
}

func startFakeDaemon(t *testing.T, answer bool) (*fakeDaemon, *net.UnixConn) {
	t.Helper()
	socket := filepath.Join(testkit.ShortTempDir(t), "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeDaemon{sawEOF: make(chan struct{}), gate: make(chan struct{})}
	ended := make(chan struct{})
	t.Cleanup(func() { close(ended) })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute)) // never outlive a broken test
		br := bufio.NewReader(c)
		if _, err := br.ReadString('\n'); err != nil { // preamble
			return
		}
		_, _ = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true}))
		req, err := br.ReadString('\n')
		if err != nil {
			return
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(req), &m)
		if _, err := br.ReadByte(); err == nil { // the half-close, nothing else
			return
		}
		close(f.sawEOF)
		if !answer {
			<-ended
			return
		}
		<-f.gate
		_, _ = c.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"late":true}}` + "\n"))
	}()
	conn, err := dial(socket)
	if err != nil {
		t.Fatal(err)
	}
	return f, conn
}

// After the harness closes stdin the shim keeps relaying until the daemon closes: an answer
// that comes long after EOF still reaches the harness, and the shim has not given up
// meanwhile. (The daemon bounds the drain itself, from its request timeout.)
func TestShimRelaysLateAnswerAfterStdinEOF(t *testing.T) {
	f, conn := startFakeDaemon(t, true)
	out := &testkit.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(conn, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`+"\n"), out)
	}()
	select {
	case <-f.sawEOF:
	case <-time.After(30 * time.Second):
		t.Fatal("the fake daemon never saw the half-close")
	}
	// Let the shim sit in its drain for a while (no answer owed yet, nothing to relay): it
	// must still be there, waiting for the daemon.
	select {
	case code := <-done:
		t.Fatalf("the shim ended (exit %d) before the daemon answered", code)
	case <-time.After(500 * time.Millisecond):
	}
	close(f.gate)
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shim did not end after the daemon closed")
	}
	if !strings.Contains(out.String(), `"late":true`) || !strings.Contains(out.String(), `"id":7`) {
		t.Errorf("late answer not relayed; stdout: %q", out.String())
	}
}

// The safety bound only stops a daemon that never closes.
func TestShimGivesUpOnAHungDaemonAfterTheSafetyBound(t *testing.T) {
	old := hungDaemonWait
	hungDaemonWait = 200 * time.Millisecond
	t.Cleanup(func() { hungDaemonWait = old })
	_, conn := startFakeDaemon(t, false)
	done := make(chan int, 1)
	go func() {
		done <- run(conn, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &testkit.SyncBuffer{})
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, want 0 (the harness hung up first)", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shim outlived its safety bound")
	}
}

// The safety bound is far above any drain the daemon applies (its request timeout, twice,
// plus its waits), so the shim never cuts off answers the daemon still sends.
func TestHungDaemonWaitIsASafetyNetOnly(t *testing.T) {
	if hungDaemonWait < 5*time.Minute {
		t.Errorf("hungDaemonWait = %v: a shorter bound cuts off answers to slow calls the daemon still waits for", hungDaemonWait)
	}
}
