package daemon

import (
	"time"

	"go.uber.org/zap"
)

// idleExit ends an autostarted daemon once it has served no session for a while: nobody
// started it on purpose, so nobody would stop it. A timer is armed when the last session
// closes (and at start) and disarmed when one opens; nothing polls.
type idleExit struct {
	after time.Duration
	timer *time.Timer // guarded by daemon.mu
}

// startIdleExit arms the idle timer; the daemon starts with no session.
func (d *daemon) startIdleExit(after time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.idle = &idleExit{after: after}
	d.idle.timer = time.AfterFunc(after, d.idleFired)
}

// stopIdleExit disarms the timer for good (shutdown has begun).
func (d *daemon) stopIdleExit() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idle != nil {
		d.idle.timer.Stop()
		d.idle = nil
	}
}

// sessionsChanged re-arms or disarms the idle timer; called with d.mu held after every
// session opens or closes.
func (d *daemon) sessionsChanged() {
	if d.idle == nil || d.sessions == nil {
		return
	}
	if len(d.sessions) == 0 {
		d.idle.timer.Reset(d.idle.after)
	} else {
		d.idle.timer.Stop()
	}
}

// idleFired asks for a stop unless something connected meanwhile: a session being set up (its
// preamble read, its target being created) is a connection without a session yet, and the
// period then starts again. The stop is a restart as far as sessions are concerned: a shim
// that connects in the last instant reconnects and starts a new daemon.
func (d *daemon) idleFired() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idle == nil || d.closing {
		return
	}
	if len(d.sessions) > 0 {
		return // a session opened as the timer fired; its close re-arms
	}
	if len(d.conns) > 0 {
		d.idle.timer.Reset(d.idle.after)
		return
	}
	d.log.Info("no session for the idle period; exiting", zap.Duration("exit_when_idle", d.idle.after))
	d.requestStop(stopRestart)
}
