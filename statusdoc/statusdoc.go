// Package statusdoc is the status document: what the daemon answers a status request with,
// and what `resmongw status` and `resmongw doctor` read.
package statusdoc

import (
	"time"

	"github.com/resmongw/resmongw/discovery"
)

// Settle is how long the daemon lets the caller's target finish its first discovery before
// it answers a status request; a client waits that long and more.
const Settle = discovery.ProbeTimeout + 2*time.Second

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

// ToolStatus is one tool's line in status.
type ToolStatus struct {
	Tool          string            `json:"tool"`
	Calls         uint64            `json:"calls"`
	Errors        map[string]uint64 `json:"errors,omitempty"` // by error code
	P50Millis     float64           `json:"p50_ms"`
	P99Millis     float64           `json:"p99_ms"`
	LastRuntimeID string            `json:"last_runtime_id,omitempty"`
	LastCall      time.Time         `json:"last_call"`
}

// OtherDaemon is a daemon of this user on a socket other than the one status asked: one user
// should have one, and a second is invisible to the harnesses of the first.
type OtherDaemon struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
}
