package daemonctl

import (
	"bufio"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// A stop can take as long as the daemon's drain, which follows its request timeout: the
// asker waits for the bound the daemon states, not its own. Here a stand-in daemon accepts a
// stop with a minute's bound and closes a little later; an asker whose own limit is 1 ms
// still sees the stop complete.
func TestControlWaitsForTheShutdownBoundTheDaemonStates(t *testing.T) {
	socket := filepath.Join(testkit.ShortTempDir(t), "mcp.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		c, err := ln.AcceptUnix()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		if _, err := sessionwire.ReadPreamble(bufio.NewReader(c)); err != nil {
			served <- err
			return
		}
		_, err = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true, Version: "test", StopWithinMS: time.Minute.Milliseconds()}))
		time.Sleep(200 * time.Millisecond) // the stand-in's shutdown: far past the asker's own limit
		served <- err
	}()
	if st, err := Control(socket, sessionwire.KindStop, time.Millisecond); err != nil || st.Version != "test" {
		t.Fatalf("Control: version %q, %v; want the stop to complete within the daemon's bound", st.Version, err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
