package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/trustfile"
	"github.com/resmongw/resmongw/version"
)

// status builds the report; callerEnv's target is evaluated too (created if need be, which
// also warms it up for the session that usually follows).
func (d *daemon) status(callerEnv discovery.Target) statusdoc.Status {
	caller, refused := d.targets.acquire(callerEnv) // nil: shutting down, or no room for it
	if caller != nil {
		defer d.targets.release(caller)
		ctx, cancel := context.WithTimeout(d.ctx, statusdoc.Settle)
		caller.settled(ctx)
		cancel()
	}
	now := time.Now()
	st := statusdoc.Status{
		Daemon: statusdoc.DaemonStatus{Version: version.Version, PID: os.Getpid(), StartedAt: d.started,
			UptimeSeconds: now.Sub(d.started).Seconds(), Socket: d.socket, LogFile: d.logFile, LogProblem: d.logProblem, Executable: d.exe.path},
		Targets:  []statusdoc.TargetStatus{},
		Sessions: []statusdoc.SessionStatus{},
	}
	_, st.Daemon.Replaced = d.exe.replaced()
	perTarget := map[string]int{}
	d.mu.Lock()
	for _, s := range d.sessions {
		st.Sessions = append(st.Sessions, s.status())
		perTarget[s.Target]++
	}
	d.mu.Unlock()
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].ID < st.Sessions[j].ID })
	for _, t := range d.targets.list() {
		cur := t.watcher.Current()
		ts := statusdoc.TargetStatus{
			Key: t.key, Env: t.env, Caller: caller == t, Sessions: perTarget[t.key],
			Verified: cur.Verified(), State: cur, Tokens: tokenPresence(cur), Tools: t.stats.snapshot(),
		}
		ts.Idle = !ts.Caller && ts.Sessions == 0
		st.Targets = append(st.Targets, ts)
	}
	callerCounts := callerEnv.Port != "" || callerEnv.StateDir != "" || callerEnv.PortFile != "" ||
		callerEnv.DBPath != "" || len(st.Sessions) == 0
	for i := range st.Targets {
		t := &st.Targets[i]
		t.Counted = t.Sessions > 0 || (t.Caller && callerCounts)
	}
	sort.Slice(st.Targets, func(i, j int) bool {
		if st.Targets[i].Caller != st.Targets[j].Caller {
			return st.Targets[i].Caller
		}
		return st.Targets[i].Key < st.Targets[j].Key
	})
	st.OK = caller != nil && targetsOK(st.Targets) // no caller target: shutting down, or no room
	if refused != nil && !errors.Is(refused, errShuttingDown) {
		st.Refused = refused.Error()
	}
	return scrubbed(st)
}

// scrubbed is st with every registered token removed from every text it carries: status
// shows what backends said (a version, a runtime id, an error message), and a backend that
// echoes its token there must not make status print it. The whole encoding is scrubbed, as an
// answer is, so no field can be forgotten; tokens are drawn from [A-Za-z0-9_-], which JSON
// never escapes, so the encoded text holds them as they are.
func scrubbed(st statusdoc.Status) statusdoc.Status {
	b, err := json.Marshal(st)
	if err != nil {
		return st // cannot happen: statusdoc.Status is plain data
	}
	clean := scrub.Bytes(b)
	if bytes.Equal(clean, b) {
		return st
	}
	var out statusdoc.Status
	if err := json.Unmarshal(clean, &out); err != nil {
		return statusdoc.Status{Daemon: statusdoc.DaemonStatus{Version: version.Version, PID: os.Getpid()}, Targets: []statusdoc.TargetStatus{}, Sessions: []statusdoc.SessionStatus{}}
	}
	return out
}

// targetsOK reports whether every counted target is verified. Idle ones are information
// only. Without the caller's target (the daemon is shutting down), nothing is OK.
func targetsOK(ts []statusdoc.TargetStatus) bool {
	hasCaller := false
	for _, t := range ts {
		hasCaller = hasCaller || t.Caller
		if t.Counted && !t.Verified {
			return false
		}
	}
	return hasCaller
}

// tokenPresence checks the token file of the verified port, or of every candidate.
func tokenPresence(st discovery.State) []statusdoc.TokenStatus {
	out := []statusdoc.TokenStatus{}
	if st.Resolved.StateDir == "" {
		return out
	}
	ports := []int{}
	if st.Backend != nil {
		ports = append(ports, st.Backend.Port)
	} else {
		for _, c := range st.Candidates {
			ports = append(ports, c.Port)
		}
	}
	for _, p := range ports {
		out = append(out, statusdoc.TokenStatus{Port: p, File: discovery.TokenFile(st.Resolved.StateDir, p),
			Presence: tokenFilePresence(st.Resolved.StateDir, p)})
	}
	return out
}

// tokenFilePresence reads the token file the way the watcher does, so "present" means a
// usable token rather than merely a file. The value is dropped here.
func tokenFilePresence(stateDir string, port int) string {
	_, err := discovery.ReadToken(stateDir, port)
	switch {
	case err == nil:
		return statusdoc.TokenPresent
	case errors.As(err, new(*trustfile.Error)):
		return statusdoc.TokenUntrusted
	case errors.Is(err, fs.ErrNotExist):
		return statusdoc.TokenAbsent
	case errors.Is(err, discovery.ErrTokenEmpty):
		return statusdoc.TokenEmpty
	case errors.Is(err, discovery.ErrTokenMalformed):
		return statusdoc.TokenMalformed
	default:
		return statusdoc.TokenUnreadable
	}
}
