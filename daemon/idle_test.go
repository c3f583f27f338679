package daemon

import (
	"net"
	"testing"
	"time"

	"github.com/resmongw/resmongw/statusdoc"
)

// The idle timer asks for a stop only when nothing is connected at the moment it fires: a
// session, or a connection still setting one up, keeps the daemon.
func TestIdleExitOnlyWithNothingConnected(t *testing.T) {
	socket, ln := testSocket(t)
	d, _, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	defer ln.Close()
	d.startIdleExit(time.Hour) // armed, but fired by hand below
	defer d.stopIdleExit()
	stopAsked := func() (stopMode, bool) {
		select {
		case m := <-d.stopReq:
			return m, true
		default:
			return 0, false
		}
	}

	d.mu.Lock()
	d.sessions[1] = &session{}
	d.mu.Unlock()
	d.idleFired()
	if _, ok := stopAsked(); ok {
		t.Fatal("stop asked with a session open")
	}

	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	d.mu.Lock()
	delete(d.sessions, 1)
	d.conns[c1] = struct{}{}
	d.mu.Unlock()
	d.idleFired()
	if _, ok := stopAsked(); ok {
		t.Fatal("stop asked with a connection being set up")
	}

	d.mu.Lock()
	delete(d.conns, c1)
	d.mu.Unlock()
	d.idleFired()
	if m, ok := stopAsked(); !ok || m != stopRestart {
		t.Fatalf("idle with nothing connected: stop asked %v, mode %v; want a restart-mode stop (a shim racing in reconnects)", ok, m)
	}
}

// Opening a session disarms the timer and closing the last one re-arms it.
func TestIdleTimerFollowsSessions(t *testing.T) {
	socket, ln := testSocket(t)
	d, _, cancel := newTestDaemon(t, socket, ln)
	defer cancel()
	defer ln.Close()
	fired := make(chan struct{}, 4)
	d.mu.Lock()
	d.idle = &idleExit{after: time.Millisecond, timer: time.AfterFunc(time.Hour, func() { fired <- struct{}{} })}
	d.mu.Unlock()
	s := &session{SessionStatus: statusdoc.SessionStatus{ID: 7}}
	if !d.addSession(s) {
		t.Fatal("addSession refused")
	}
	d.mu.Lock()
	stopped := !d.idle.timer.Stop() // false: addSession already stopped it
	d.mu.Unlock()
	if !stopped {
		t.Fatal("the timer was still armed with a session open")
	}
	d.removeSession(s)
	select {
	case <-fired: // re-armed for 1ms on the last close
	case <-time.After(30 * time.Second):
		t.Fatal("closing the last session did not re-arm the idle timer")
	}
}
