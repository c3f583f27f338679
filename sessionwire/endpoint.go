// Package sessionwire is where the daemon and every client of its socket (the stdio shim, status,
// stop, restart) meet: the one checked dial, the lock holder, and the lines exchanged around a
// session (preamble, reply, goodbye), stdlib only (x/sys on macOS for the peer's credentials)
// because the shim imports it and must stay tiny.
package sessionwire

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/resmongw/resmongw/version"
)

// Protocol is the preamble version both sides speak.
const Protocol = 1

// Preamble kinds.
const (
	KindMCP    = "mcp"    // the rest of the stream is an MCP session
	KindStatus = "status" // the daemon writes its status JSON and closes
	// KindActivity: the daemon writes a Reply, the records of calls it keeps, HistoryEnd,
	// then each new record until the client closes (`resmongw activity`).
	KindActivity = "activity"
)

// HistoryEnd is the line after the kept records on an activity connection.
const HistoryEnd = `{"history_end":true}` + "\n"

// MaxPreamble bounds the first line; anything longer is refused.
const MaxPreamble = 64 << 10

// NoAutostartEnv, set to 1, stops the shim from starting the daemon.
const NoAutostartEnv = "RESMONGW_NO_AUTOSTART"

// EnvKeys are the harness variables the shim forwards. They mirror discovery.EnvKeys, which
// this package cannot import (it would pull the daemon's dependencies into the shim); a daemon
// test keeps the two lists equal.
var EnvKeys = []string{"RESMON_PORT", "RESMON_STATE_DIR", "RESMON_PORT_FILE", "RESMON_DB_PATH", "HOME", "XDG_STATE_HOME"}

// Preamble is the first line a client writes on the socket.
type Preamble struct {
	Resmongw int               `json:"resmongw"`
	Kind     string            `json:"kind"`
	Env      map[string]string `json:"env"`
	PID      int               `json:"pid"`  // the shim's own pid (the daemon checks it against the peer credentials)
	PPID     int               `json:"ppid"` // the harness's pid
	Client   string            `json:"client"`
	// Session is the session protocol the client speaks (SessionProtocol; 0 or absent: none,
	// an older shim). See session.go.
	Session int `json:"session,omitempty"`
	// Version is the client's build (version.Version): a daemon that meets a newer binary at
	// its own path hands over to it (daemon/upgrade.go).
	Version string `json:"version,omitempty"`
	// Writes is the session's write policy (`resmongw stdio --writes`: ask, harness or off;
	// absent: ask). The daemon enforces it and refuses a value it does not know.
	Writes string `json:"writes,omitempty"`
	// MaxOutput, when above 0, is the answer size in bytes every call of the session is cut
	// to, whatever the client (`resmongw stdio --max-output`).
	MaxOutput int `json:"max_output,omitempty"`
}

// Reply is the daemon's first line on an MCP connection: OK, or why the connection is refused.
// The shim consumes it and never forwards it to the harness.
type Reply struct {
	Resmongw int    `json:"resmongw"`
	OK       bool   `json:"ok"`
	Version  string `json:"version,omitempty"`
	Error    string `json:"error,omitempty"`
	// Session is the session protocol the daemon speaks (0 or absent: none, an older
	// daemon); ReadTools, sent with it, names the tools a shim may retry once. See session.go.
	Session   int      `json:"session,omitempty"`
	ReadTools []string `json:"read_tools,omitempty"`
	// StopWithinMS, on an accepted stop or restart, is the longest the daemon's shutdown may
	// take (its drain bound follows its own request timeout), so the asker waits that long
	// instead of a bound of its own that a slow call could outlast.
	StopWithinMS int64 `json:"stop_within_ms,omitempty"`
	// ExitWhenIdleMS, on an accepted stop or restart, is the daemon's idle period (absent: it
	// stays), so `resmongw restart` brings back the same kind of daemon.
	ExitWhenIdleMS int64 `json:"exit_when_idle_ms,omitempty"`
}

// pathKeys are the forwarded variables that name files. A relative one means relative to the
// harness's working directory, which the daemon does not share, so CaptureEnv makes it
// absolute here, on the harness's side.
var pathKeys = map[string]bool{"RESMON_STATE_DIR": true, "RESMON_PORT_FILE": true, "RESMON_DB_PATH": true}

// CaptureEnv collects the forwarded variables that are set and non-empty, with relative
// RESMON_* paths made absolute against our working directory.
func CaptureEnv(getenv func(string) string) map[string]string {
	env := make(map[string]string, len(EnvKeys))
	for _, k := range EnvKeys {
		v := getenv(k)
		if v == "" {
			continue
		}
		if pathKeys[k] && !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		env[k] = v
	}
	return env
}

// SocketGone is what the shim and status say when no socket file exists but a live daemon
// holds the lock: it re-creates a removed socket when the file event reaches it (at once on
// Linux) or at its periodic check (within 30 s: macOS reports no event for it).
func SocketGone(pid int, socket string) string {
	return fmt.Sprintf("pid %d holds the lock but its socket %s is gone; it will recreate it within 30 seconds (or restart it)", pid, socket)
}

// Line encodes v as one JSON line.
func Line(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only plain structs and maps are ever passed
		panic(err)
	}
	return append(b, '\n')
}

// NewPreamble is the preamble of a client in this process: the forwarded variables of its
// environment (getenv), its pid and its parent's, and a label for status.
func NewPreamble(kind string, getenv func(string) string, client string) Preamble {
	return Preamble{Resmongw: Protocol, Kind: kind, Env: CaptureEnv(getenv), PID: os.Getpid(), PPID: os.Getppid(), Client: client, Version: version.Version}
}

// ReadPreamble is the daemon's half: it reads one line of at most MaxPreamble bytes from br
// and checks its version and kind. The error says what was wrong, for the refusal reply.
func ReadPreamble(br *bufio.Reader) (*Preamble, error) {
	line, err := readFirstLine(br)
	if err != nil {
		return nil, fmt.Errorf("reading preamble: %w", err)
	}
	var p Preamble
	if err := json.Unmarshal(line, &p); err != nil {
		return nil, fmt.Errorf("preamble is not JSON: %w", err)
	}
	if p.Resmongw != Protocol {
		return nil, fmt.Errorf("preamble protocol %d, this daemon speaks %d (restart the daemon after an upgrade)", p.Resmongw, Protocol)
	}
	if p.Kind != KindMCP && p.Kind != KindStatus && p.Kind != KindActivity && !IsControl(p.Kind) {
		return nil, fmt.Errorf("unknown preamble kind %q", p.Kind)
	}
	return &p, nil
}

// ReadReply is the client's half: the daemon's first line on an MCP connection.
func ReadReply(br *bufio.Reader) (Reply, error) {
	var r Reply
	line, err := readFirstLine(br)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, ErrNotAReply
	}
	return r, nil
}

// ErrNotAReply: the first line from the socket is not a daemon's reply (not a resmongw socket).
var ErrNotAReply = errors.New("the first line is not a resmongw reply")

// errLineTooLong is a first line past its bound.
var errLineTooLong = fmt.Errorf("first line longer than %d bytes", MaxPreamble)

// readFirstLine reads the preamble or the reply: one whole line of at most MaxPreamble bytes.
func readFirstLine(br *bufio.Reader) ([]byte, error) {
	line, err := NewLineReader(br, MaxPreamble).ReadLine()
	switch {
	case errors.Is(err, ErrLineTooLong):
		return nil, errLineTooLong
	case err == nil && line[len(line)-1] != '\n':
		return nil, io.ErrUnexpectedEOF
	}
	return line, err
}

// Control kinds: a preamble of one of these asks the daemon to act on itself instead of
// serving. The daemon answers with a Reply and, once it accepted, keeps the connection open
// until it has shut down and released its lock, so the client's EOF means a new daemon can
// take over.
const (
	KindStop    = "stop"    // end every session and exit (`resmongw stop`)
	KindRestart = "restart" // exit so a new daemon takes over; shims reconnect (`resmongw restart`)
)

// IsControl reports whether kind is one of the control kinds.
func IsControl(kind string) bool { return kind == KindStop || kind == KindRestart }
