// Package discovery finds the resmon backend a session means (port, token, state directory)
// and keeps it verified as the app restarts.
package discovery

import (
	"context"
	"time"
)

// Contract constants (../shared/spec/reference-mcp-server.md §1, §5).
const (
	DefaultPort       = 8742
	MinBackendVersion = "1.8.0"
	TokenFilePrefix   = "api-token-"
	PortFileName      = "resmon.port"
	DaemonLockName    = "daemon.lock"
	ProbeTimeout      = 3 * time.Second
)

// Target is what a harness's environment says about which resmon instance it means.
// The shim captures these variables and sends them in its preamble, so the daemon
// resolves defaults exactly as the harness would have. Empty means unset.
type Target struct {
	Port         string `json:"RESMON_PORT,omitempty"`
	StateDir     string `json:"RESMON_STATE_DIR,omitempty"`
	PortFile     string `json:"RESMON_PORT_FILE,omitempty"`
	DBPath       string `json:"RESMON_DB_PATH,omitempty"`
	Home         string `json:"HOME,omitempty"`
	XDGStateHome string `json:"XDG_STATE_HOME,omitempty"`
}

// EnvKeys are the environment variables that make up a Target, in preamble order.
var EnvKeys = []string{"RESMON_PORT", "RESMON_STATE_DIR", "RESMON_PORT_FILE", "RESMON_DB_PATH", "HOME", "XDG_STATE_HOME"}

// PortSource says which rule produced a candidate port.
type PortSource string

const (
	SourceEnv      PortSource = "env"       // RESMON_PORT
	SourcePortFile PortSource = "port_file" // the port file
	SourceDefault  PortSource = "default"   // 8742, only when nothing named a port
)

// Candidate is one port to try, with the rule that named it.
type Candidate struct {
	Port   int        `json:"port"`
	Source PortSource `json:"source"`
}

// Resolved is a Target with its paths worked out.
type Resolved struct {
	StateDir       string `json:"state_dir"`
	StateDirSource string `json:"state_dir_source"` // "RESMON_STATE_DIR" | "default"
	PortFile       string `json:"port_file"`
	PortFileSource string `json:"port_file_source"` // "RESMON_PORT_FILE" | "RESMON_DB_PATH" | "state_dir"
}

// Identity is the backend's runtime identity object (contract v2.3).
type Identity struct {
	ContractVersion int     `json:"contract_version"`
	RuntimeID       string  `json:"runtime_id"`
	SchemaVersion   *int    `json:"schema_version"`
	CorpusID        *string `json:"corpus_id"`
	BuildID         *string `json:"build_id"`
}

// Token is a backend API token. It never prints: String, GoString and MarshalJSON redact it.
// Use Reveal only to build the Authorization header.
type Token string

func (Token) String() string               { return "[redacted]" }
func (Token) GoString() string             { return "[redacted]" }
func (Token) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }
func (t Token) Reveal() string             { return string(t) }

// Backend is one verified backend: its port answered GET /api/health with our token, a
// version of at least 1.8.0 and (when it sent one) a valid identity.
type Backend struct {
	BaseURL    string     `json:"base_url"` // http://127.0.0.1:<port>
	Port       int        `json:"port"`
	PortSource PortSource `json:"port_source"`
	StateDir   string     `json:"state_dir"`
	TokenFile  string     `json:"token_file"`
	Token      Token      `json:"-"`
	Version    string     `json:"version"`
	Identity   *Identity  `json:"identity,omitempty"` // nil when the backend sent none (pre-2.3)
	VerifiedAt time.Time  `json:"verified_at"`
	// Simulated: the health answer says "simulated": true (`resmongw dev backend`, the demo):
	// every answer is invented, and status says so.
	Simulated bool `json:"simulated,omitempty"`
	// Chain explains, for a person, how this backend was found (same style as
	// Unavailable.Chain), including notes such as a malformed identity that was dropped.
	Chain []string `json:"chain,omitempty"`
}

// RuntimeID is the backend's runtime id, or "" when it has none.
func (b *Backend) RuntimeID() string {
	if b == nil || b.Identity == nil {
		return ""
	}
	return b.Identity.RuntimeID
}

// SameInstance reports whether a and b are the same serving process as far as a client can
// tell: same port, same token, same runtime id. A change in any of them is a new generation.
func (b *Backend) SameInstance(o *Backend) bool {
	if b == nil || o == nil {
		return b == o
	}
	return b.Port == o.Port && b.Token == o.Token && b.RuntimeID() == o.RuntimeID()
}

// Reason is a stable code for why no backend is verified.
type Reason string

const (
	ReasonNotRunning      Reason = "not_running"       // nothing answered on any candidate
	ReasonVersionRejected Reason = "version_rejected"  // answered, but older than 1.8.0 (or unparseable)
	ReasonTokenRefused    Reason = "token_refused"     // answered 401 to the token in the file
	ReasonNoToken         Reason = "no_token"          // no usable token file for the port
	ReasonBadPortEnv      Reason = "bad_port_env"      // RESMON_PORT is set but is not a port
	ReasonBadPortFile     Reason = "bad_port_file"     // the port file exists but does not hold a port
	ReasonBadStateDir     Reason = "bad_state_dir"     // the state directory is not a directory / unreadable
	ReasonBadHealth       Reason = "bad_health_answer" // answered, but not a readable health body
	// ReasonUntrustedFile: the state directory, the port file or the token file is not ours
	// alone (another owner, writable by others, a symlink, a FIFO): nothing was read from it
	// and no token was sent anywhere.
	ReasonUntrustedFile Reason = "untrusted_file"
	// ReasonUntrustedListener: the port is held by a listening socket that belongs to another
	// user; the token was not sent to it.
	ReasonUntrustedListener Reason = "untrusted_listener"
)

// Unavailable says why no backend is verified: the contract's backend_unavailable, with the
// reference's message precedence (rejected, token_refused, no_token, not running) and lists.
type Unavailable struct {
	Reason       Reason   `json:"reason"`
	Message      string   `json:"message"`
	Tried        []string `json:"tried"`
	Rejected     []string `json:"rejected,omitempty"`
	TokenRefused []string `json:"token_refused,omitempty"`
	NoToken      []string `json:"no_token,omitempty"`
	// Chain explains, for a person (resmongw status), each link that was checked and how it
	// failed, first failing link last, e.g. "port file /x/resmon.port names 9001".
	Chain []string `json:"chain,omitempty"`
}

func (u *Unavailable) Error() string { return u.Message }

// Detail is the error payload's detail object: tried, plus the list that chose the message.
func (u *Unavailable) Detail() map[string]any {
	d := map[string]any{"tried": nonNil(u.Tried)}
	switch {
	case len(u.Rejected) > 0 && u.Reason == ReasonVersionRejected:
		d["rejected"] = u.Rejected
	case len(u.TokenRefused) > 0 && u.Reason == ReasonTokenRefused:
		d["token_refused"] = u.TokenRefused
	case len(u.NoToken) > 0 && u.Reason == ReasonNoToken:
		d["no_token"] = u.NoToken
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// State is the watcher's current answer for one target: a verified backend or why not.
// Exactly one of Backend and Unavailable is set once the first check has finished.
type State struct {
	// Generation increases by one whenever the verified instance changes (port, token or
	// runtime id) or availability flips. Equal generations mean the same backend.
	Generation  uint64       `json:"generation"`
	Backend     *Backend     `json:"backend,omitempty"`
	Unavailable *Unavailable `json:"unavailable,omitempty"`
	Resolved    Resolved     `json:"resolved"`
	Candidates  []Candidate  `json:"candidates"`
	CheckedAt   time.Time    `json:"checked_at"`
	Since       time.Time    `json:"since"` // when this generation began
}

// Verified reports whether a backend is verified.
func (s State) Verified() bool { return s.Backend != nil }

// Source is what the backend client needs from a watcher: the current state, a way to wait for
// a newer one, and a way to ask for an immediate re-check (after a 401 or a dead connection).
// *Watcher implements it; tests may fake it.
type Source interface {
	// Current returns the latest state. Before the first check finishes it returns a state
	// with neither Backend nor Unavailable set.
	Current() State
	// Wait blocks until the generation is greater than gen, or ctx ends, and returns the
	// latest state either way.
	Wait(ctx context.Context, gen uint64) State
	// Recheck asks for a re-verification as soon as possible (debounced) and returns at once.
	Recheck()
}
