package daemonctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/version"
	"github.com/spf13/pflag"
)

// Exit codes of `resmongw status`.
const (
	statusOK         = 0
	statusDegraded   = 1 // the caller's target, or one a session uses, has no verified backend
	statusUsage      = 2
	statusNotRunning = 3
)

// StatusOptions are `resmongw status`'s flags.
type StatusOptions struct {
	JSON    bool
	Verbose bool
	Socket  string
	// Getenv is the caller's environment (its target is evaluated too); nil = os.Getenv.
	Getenv func(string) string
}

// BindStatusFlags declares status's flags on fs, bound to o; the CLI shows and parses exactly
// these.
func BindStatusFlags(fs *pflag.FlagSet, o *StatusOptions) {
	fs.BoolVar(&o.JSON, "json", false, "print JSON (every detail)")
	fs.BoolVar(&o.Verbose, "verbose", false, "every detail: ports, token files, how each backend was found, per-tool calls, session pids")
	fs.StringVar(&o.Socket, "socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
}

// StatusMain runs `resmongw status`: exit 0 when every target in use has a verified backend,
// 1 when one has none, 3 when no daemon runs.
func StatusMain(o StatusOptions, stdout, stderr io.Writer) int {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	socket, err := paths.Socket(o.Socket, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "resmongw status:", err)
		return statusUsage
	}
	others := otherDaemons(socket, getenv)
	st, err := FetchStatus(socket, getenv)
	if err != nil {
		if sessionwire.IsDown(err) {
			notRunning(stdout, socket, o.JSON, errors.Is(err, syscall.ENOENT), getenv, others)
			if !o.JSON {
				privateDaemonNote(stdout, socket, o.Socket, getenv)
			}
			return statusNotRunning
		}
		fmt.Fprintln(stderr, "resmongw status:", err)
		return statusDegraded
	}
	st.OtherDaemons = others
	switch {
	case o.JSON:
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintln(stdout, string(b))
	case o.Verbose:
		renderVerbose(stdout, st, time.Now())
	default:
		renderStatus(stdout, st, time.Now())
	}
	if !o.JSON {
		privateDaemonNote(stdout, socket, o.Socket, getenv)
	}
	if st.OK {
		return statusOK
	}
	return statusDegraded
}

// otherDaemons looks for live daemons at the places a daemon of this user may listen besides
// socket: the per-user default, and the places the environment names or older versions used
// ($XDG_RUNTIME_DIR, $HOME, $XDG_STATE_HOME). A lock file held by a live `serve` is a daemon.
func otherDaemons(socket string, getenv func(string) string) []statusdoc.OtherDaemon {
	var cands []string
	if p, err := paths.DefaultSocket(); err == nil {
		cands = append(cands, p)
	}
	if p := getenv(paths.SocketEnv); p != "" {
		cands = append(cands, p)
	}
	if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		cands = append(cands, filepath.Join(rt, "resmongw", "mcp.sock"))
	}
	for _, base := range []string{getenv("XDG_STATE_HOME"), filepath.Join(getenv("HOME"), ".local", "state")} {
		if filepath.IsAbs(base) {
			cands = append(cands, filepath.Join(base, "resmongw", "run", "mcp.sock"))
		}
	}
	seen := map[string]bool{filepath.Clean(socket): true}
	var out []statusdoc.OtherDaemon
	for _, c := range cands {
		c = filepath.Clean(c)
		if seen[c] {
			continue
		}
		seen[c] = true
		if pid := sessionwire.LockHolder(c); pid > 0 {
			out = append(out, statusdoc.OtherDaemon{PID: pid, Socket: c})
		}
	}
	return out
}

// renderOthers warns about every other daemon of this user.
func renderOthers(w io.Writer, others []statusdoc.OtherDaemon) {
	for _, o := range others {
		fmt.Fprintf(w, "WARNING: another resmongw daemon of this user runs: pid %d on %s\n"+
			"  (harnesses reach one or the other depending on their environment; stop it with 'resmongw stop --socket %s')\n",
			o.PID, o.Socket, o.Socket)
	}
}

// notRunning explains why no daemon answered at socket and what to do about it.
func notRunning(w io.Writer, socket string, asJSON, noSocket bool, getenv func(string) string, others []statusdoc.OtherDaemon) {
	holder := 0
	if noSocket {
		holder = sessionwire.LockHolder(socket)
	}
	installed := ServiceInstalled(getenv)
	// An entry `resmongw demo` printed: its daemon lived in the demo's process, and nothing
	// starts it again; say the demo is over and how to remove the entry.
	demo := ""
	if dir := getenv(sessionwire.DemoEnv); dir != "" && holder == 0 {
		demo = sessionwire.DemoUnreachable(dir, fmt.Errorf("no daemon at %s", socket)).Error()
	}
	if asJSON {
		v := map[string]any{"running": holder > 0, "socket": socket, "ok": false, "service_installed": installed}
		if demo != "" {
			v["demo"] = demo
		}
		if holder > 0 {
			v["pid"] = holder
			v["socket_missing"] = true
		}
		if len(others) > 0 {
			v["other_daemons"] = others
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(w, string(b))
		return
	}
	defer renderOthers(w, others)
	switch {
	case demo != "":
		fmt.Fprintln(w, demo+".")
	case holder > 0:
		fmt.Fprintf(w, "resmongw is running but unreachable: %s.\n", sessionwire.SocketGone(holder, socket))
	case installed:
		fmt.Fprintf(w, "resmongw is not running (no daemon at %s).\n"+
			"The per-user service is installed: start it with 'resmongw start'. Or run 'resmongw serve' yourself;\n"+
			"a harness running 'resmongw stdio' also starts it on demand.\n", socket)
	default:
		fmt.Fprintf(w, "resmongw is not running (no daemon at %s).\n"+
			"A harness running 'resmongw stdio' starts it on demand. Or install the per-user service with\n"+
			"'resmongw install', or run it yourself: 'resmongw serve' (foreground) or 'resmongw start' (background).\n", socket)
	}
}

// FetchStatus asks the daemon at socket for its status, sending the caller's environment
// (getenv) so that its target is evaluated too. An error for which sessionwire.IsDown holds
// means no daemon runs.
func FetchStatus(socket string, getenv func(string) string) (*statusdoc.Status, error) {
	c, err := sessionwire.Dial(socket) // our environment goes only to a daemon of ours
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(statusdoc.Settle + 5*time.Second))
	if _, err := c.Write(sessionwire.Line(sessionwire.NewPreamble(sessionwire.KindStatus, getenv, "resmongw status"))); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(c, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading status: %w", err)
	}
	var reply sessionwire.Reply
	if json.Unmarshal(b, &reply) == nil && reply.Error != "" {
		return nil, fmt.Errorf("the daemon refused: %s", reply.Error)
	}
	var st statusdoc.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("unreadable status from the daemon: %w", err)
	}
	return &st, nil
}

// renderStatus prints the default human form, one screen: the daemon, each target in a line
// or two, the sessions by the client name the harness gave. renderVerbose has the rest.
func renderStatus(w io.Writer, st *statusdoc.Status, now time.Time) {
	d := st.Daemon
	fmt.Fprintf(w, "resmongw %s: pid %d, up %s, socket %s\n", d.Version, d.PID,
		roundDur(time.Duration(d.UptimeSeconds*float64(time.Second))), d.Socket)
	renderVersions(w, d)
	renderOthers(w, st.OtherDaemons)
	if d.LogProblem != "" {
		fmt.Fprintf(w, "log: %s\n", logLine(d))
	}
	calls := map[string]int{}
	for i, t := range st.Targets {
		calls[t.Key] = i + 1
		var n, errs uint64
		for _, tool := range t.Tools {
			n += tool.Calls
			for _, c := range tool.Errors {
				errs += c
			}
		}
		use := fmt.Sprintf("%d session(s)", t.Sessions)
		if n > 0 {
			use += fmt.Sprintf(", %d calls, %d errors", n, errs)
		}
		if neverRan(w, i+1, targetNote(t), use, t) {
			continue
		}
		fmt.Fprintf(w, "target %d%s, %s: %s\n", i+1, targetNote(t), use, backendLine(t.State))
		fmt.Fprintf(w, "  state dir %s (%s)\n", t.State.Resolved.StateDir, t.State.Resolved.StateDirSource)
		if u := t.State.Unavailable; u != nil {
			fmt.Fprintf(w, "  tried %s\n", orNone(strings.Join(u.Tried, ", ")))
		}
	}
	if st.Refused != "" {
		fmt.Fprintf(w, "this shell's environment: no target: %s\n", st.Refused)
	}
	if len(st.Sessions) == 0 {
		fmt.Fprintln(w, "sessions: none")
	}
	for _, s := range st.Sessions {
		fmt.Fprintf(w, "session %d: %s, target %d, for %s\n", s.ID, clientLabel(s), calls[s.Target], roundDur(now.Sub(s.Since)))
	}
}

// logLine is where the daemon's log goes.
func logLine(d statusdoc.DaemonStatus) string {
	if d.LogProblem != "" {
		return "stderr only (the journal under the service): the log file cannot be opened: " + d.LogProblem
	}
	return d.LogFile
}

// targetNote says why a target is listed and whether it counts in the exit code.
func targetNote(t statusdoc.TargetStatus) string {
	switch {
	case t.Caller && !t.Counted:
		return " (this shell's environment; not counted: sessions use other targets)"
	case t.Caller:
		return " (this shell's environment)"
	case t.Idle:
		return " (idle: no session uses it; not counted in the exit code)"
	}
	return ""
}

// backendLine is a target's backend in a few words.
func backendLine(s discovery.State) string {
	switch {
	case s.Backend != nil:
		b := s.Backend
		line := fmt.Sprintf("verified resmon %s at %s", b.Version, b.BaseURL)
		if b.Simulated {
			line = "SIMULATED " + line + " (resmongw dev backend: invented data)"
		}
		return line
	case s.Unavailable != nil:
		return fmt.Sprintf("unavailable (%s): %s", s.Unavailable.Reason, s.Unavailable.Message)
	}
	return "still checking"
}

// clientLabel names a session by what the harness called itself in initialize, else by the
// process that started the shim.
func clientLabel(s statusdoc.SessionStatus) string {
	if s.ClientName != "" {
		return strings.TrimSpace(s.ClientName + " " + s.ClientVersion)
	}
	if s.Client != "" {
		return s.Client + " (before initialize)"
	}
	return "?"
}

// renderVerbose prints every detail status has.
func renderVerbose(w io.Writer, st *statusdoc.Status, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	d := st.Daemon
	fmt.Fprintf(tw, "resmongw %s\tpid %d, up %s\n", d.Version, d.PID, roundDur(time.Duration(d.UptimeSeconds*float64(time.Second))))
	fmt.Fprintf(tw, "socket\t%s\n", d.Socket)
	fmt.Fprintf(tw, "log\t%s\n", logLine(d))
	if d.Executable != "" {
		fmt.Fprintf(tw, "binary\t%s\n", d.Executable)
	}
	tw.Flush()
	renderVersions(w, d)
	renderOthers(w, st.OtherDaemons)
	if st.Refused != "" {
		fmt.Fprintf(w, "this shell's environment: no target: %s\n", st.Refused)
	}
	number := map[string]int{} // targets are numbered for the session lines; keys are long
	for i, t := range st.Targets {
		number[t.Key] = i + 1
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "target %d%s\t%d session(s)\n", i+1, targetNote(t), t.Sessions)
		fmt.Fprintf(tw, "  key\t%s\n", t.Key)
		s := t.State
		fmt.Fprintf(tw, "  state dir\t%s (%s)\n", s.Resolved.StateDir, s.Resolved.StateDirSource)
		if s.Resolved.PortFile != "" {
			fmt.Fprintf(tw, "  port file\t%s (%s)\n", s.Resolved.PortFile, s.Resolved.PortFileSource)
		}
		if b := s.Backend; b != nil {
			fmt.Fprintf(tw, "  port\t%d (from %s)\n", b.Port, b.PortSource)
		} else {
			var cs []string
			for _, c := range s.Candidates {
				cs = append(cs, fmt.Sprintf("%d (%s)", c.Port, c.Source))
			}
			fmt.Fprintf(tw, "  candidates\t%s\n", orNone(strings.Join(cs, ", ")))
		}
		for _, tok := range t.Tokens {
			fmt.Fprintf(tw, "  token\t%s (%s)\n", tok.Presence, tok.File)
		}
		switch {
		case s.Backend != nil:
			b := s.Backend
			schema, rid := "-", "-"
			if b.Identity != nil {
				rid = b.Identity.RuntimeID
				if b.Identity.SchemaVersion != nil {
					schema = fmt.Sprint(*b.Identity.SchemaVersion)
				}
			}
			sim := ""
			if b.Simulated {
				sim = "SIMULATED (invented data), "
			}
			fmt.Fprintf(tw, "  backend\t%sverified: %s, version %s, schema %s, runtime %s\n", sim, b.BaseURL, b.Version, schema, rid)
			fmt.Fprintf(tw, "  verified\t%s ago (generation %d, since %s)\n", roundDur(now.Sub(b.VerifiedAt)), s.Generation, s.Since.Format(time.RFC3339))
		case s.Unavailable != nil:
			u := s.Unavailable
			fmt.Fprintf(tw, "  backend\tunavailable (%s): %s\n", u.Reason, u.Message)
			for _, c := range u.Chain {
				fmt.Fprintf(tw, "  \t- %s\n", c)
			}
			fmt.Fprintf(tw, "  tried\t%s\n", orNone(strings.Join(u.Tried, ", ")))
		default:
			fmt.Fprintf(tw, "  backend\tstill checking\n")
		}
		for _, tool := range t.Tools {
			errs := ""
			var n uint64
			var parts []string
			for code, c := range tool.Errors {
				n += c
				parts = append(parts, fmt.Sprintf("%s %d", code, c))
			}
			if n > 0 {
				sort.Strings(parts)
				errs = " (" + strings.Join(parts, ", ") + ")"
			}
			fmt.Fprintf(tw, "  tool %s\t%d calls, %d errors%s, p50 %.1fms, p99 %.1fms\n", tool.Tool, tool.Calls, n, errs, tool.P50Millis, tool.P99Millis)
		}
	}
	fmt.Fprintln(tw)
	if len(st.Sessions) == 0 {
		fmt.Fprintln(tw, "sessions\tnone")
	}
	for _, s := range st.Sessions {
		fmt.Fprintf(tw, "session %d\t%s (shim pid %d, parent %s pid %d), target %d, for %s\n",
			s.ID, clientLabel(s), s.PID, orNone(s.Client), s.HarnessPID, number[s.Target], roundDur(now.Sub(s.Since)))
	}
	tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func roundDur(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// renderVersions says "running X, installed Y" when the daemon's version is not this
// binary's, and what happens next.
func renderVersions(w io.Writer, d statusdoc.DaemonStatus) {
	if d.Version == version.Version {
		return
	}
	fmt.Fprintf(w, "running %s, installed %s", d.Version, version.Version)
	switch {
	case d.Replaced:
		fmt.Fprintf(w, ": %s was replaced; the next new session moves the daemon to it (or run 'resmongw restart' now)\n", d.Executable)
	case d.Executable != "":
		fmt.Fprintf(w, " (the daemon runs %s; 'resmongw restart' starts the daemon again from there)\n", d.Executable)
	default:
		fmt.Fprintln(w)
	}
}
