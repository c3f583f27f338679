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
	"github.com/resmongw/resmongw/trustfile"
	"github.com/resmongw/resmongw/version"
)

// Status is what `resmongw status` shows, and its --json form.
type Status struct {
	Daemon   DaemonStatus    `json:"daemon"`
	Targets  []TargetStatus  `json:"targets"`
	Sessions []SessionStatus `json:"sessions"`
	// OK is true when every counted target (Counted) has a verified backend: those open
	// sessions use, and the caller's own. Idle targets (kept a while after their last session)
	// are shown but do not count: an instance the user no longer runs must not make status fail.
	OK bool `json:"ok"`
	// OtherDaemons are live daemons of this user on other sockets (filled in by the status
	// command, not the daemon): there should be none.
	OtherDaemons []OtherDaemon `json:"other_daemons,omitempty"`
	// Refused says why the caller's environment has no target: the daemon serves its limit of
	// targets, every one with a session (a session from that environment is refused alike).
	Refused string `json:"refused,omitempty"`
}

// DaemonStatus describes the daemon process.
type DaemonStatus struct {
	Version       string    `json:"version"`
	PID           int       `json:"pid"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	Socket        string    `json:"socket"`
	LogFile       string    `json:"log_file"` // "" when the daemon could not open one (LogProblem)
	// LogProblem is why the log file could not be opened; the daemon logs to stderr then
	// (the journal, or launchd's log, under the service).
	LogProblem string `json:"log_problem,omitempty"`
	// Executable is the binary the daemon runs from; Replaced, that another file now sits at
	// that path (an upgrade the daemon has not handed over to yet: upgrade.go).
	Executable string `json:"executable,omitempty"`
	Replaced   bool   `json:"executable_replaced,omitempty"`
}

// TargetStatus is one target: where it looks, what it found, and its calls.
type TargetStatus struct {
	Key      string           `json:"key"`
	Env      discovery.Target `json:"env"`
	Caller   bool             `json:"caller"` // the status caller's own environment names it
	Sessions int              `json:"sessions"`
	// Idle: neither the caller's nor in use by a session; kept for reuse until it expires,
	// listed for information and left out of OK.
	Idle bool `json:"idle"`
	// Counted: the exit code follows this target. Targets sessions use count; the caller's
	// counts when it names a backend (RESMON_* set) or no session uses any target, so a plain
	// `status` beside a demo or a pinned harness follows what is in use, not an absent default.
	Counted  bool            `json:"counted"`
	Verified bool            `json:"verified"`
	State    discovery.State `json:"state"`
	// Tokens says, per candidate port, whether its token file is usable. Never the value.
	Tokens []TokenStatus `json:"tokens"`
	Tools  []ToolStatus  `json:"tools"`
}

// Token file presence, as TokenStatus.Presence reports it.
const (
	TokenPresent    = "present" // holds a token-shaped value
	TokenAbsent     = "absent"
	TokenEmpty      = "unusable (empty)"
	TokenMalformed  = "unusable (not token-shaped)"
	TokenUnreadable = "unreadable"
	TokenUntrusted  = "untrusted" // refused unread: another owner, readable by others, a symlink, a FIFO
)

// TokenStatus is one token file's presence.
type TokenStatus struct {
	Port     int    `json:"port"`
	File     string `json:"file"`
	Presence string `json:"presence"`
}

// SessionStatus is one open MCP session.
type SessionStatus struct {
	ID     uint64 `json:"id"`
	Target string `json:"target"`
	Client string `json:"client"` // the harness's argv[0], as the shim saw it
	// ClientName and ClientVersion are what the harness named itself in initialize's
	// clientInfo (empty until initialize arrives): a person knows "claude-code 2.1.332", not
	// the parent process's argv[0].
	ClientName    string    `json:"client_name,omitempty"`
	ClientVersion string    `json:"client_version,omitempty"`
	PID           int       `json:"pid"`         // the shim, from the socket's peer credentials
	HarnessPID    int       `json:"harness_pid"` // its parent, as the shim reported it
	Since         time.Time `json:"since"`
}

// status builds the report; callerEnv's target is evaluated too (created if need be, which
// also warms it up for the session that usually follows).
func (d *daemon) status(callerEnv discovery.Target) Status {
	caller, refused := d.targets.acquire(callerEnv) // nil: shutting down, or no room for it
	if caller != nil {
		defer d.targets.release(caller)
		ctx, cancel := context.WithTimeout(d.ctx, statusSettle)
		caller.settled(ctx)
		cancel()
	}
	now := time.Now()
	st := Status{
		Daemon: DaemonStatus{Version: version.Version, PID: os.Getpid(), StartedAt: d.started,
			UptimeSeconds: now.Sub(d.started).Seconds(), Socket: d.socket, LogFile: d.logFile, LogProblem: d.logProblem, Executable: d.exe.path},
		Targets:  []TargetStatus{},
		Sessions: []SessionStatus{},
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
		ts := TargetStatus{
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
func scrubbed(st Status) Status {
	b, err := json.Marshal(st)
	if err != nil {
		return st // cannot happen: Status is plain data
	}
	clean := scrub.Bytes(b)
	if bytes.Equal(clean, b) {
		return st
	}
	var out Status
	if err := json.Unmarshal(clean, &out); err != nil {
		return Status{Daemon: DaemonStatus{Version: version.Version, PID: os.Getpid()}, Targets: []TargetStatus{}, Sessions: []SessionStatus{}}
	}
	return out
}

// targetsOK reports whether every counted target is verified. Idle ones are information
// only. Without the caller's target (the daemon is shutting down), nothing is OK.
func targetsOK(ts []TargetStatus) bool {
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
func tokenPresence(st discovery.State) []TokenStatus {
	out := []TokenStatus{}
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
		out = append(out, TokenStatus{Port: p, File: discovery.TokenFile(st.Resolved.StateDir, p),
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
		return TokenPresent
	case errors.As(err, new(*trustfile.Error)):
		return TokenUntrusted
	case errors.Is(err, fs.ErrNotExist):
		return TokenAbsent
	case errors.Is(err, discovery.ErrTokenEmpty):
		return TokenEmpty
	case errors.Is(err, discovery.ErrTokenMalformed):
		return TokenMalformed
	default:
		return TokenUnreadable
	}
}
