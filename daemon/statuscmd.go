package daemon

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// Exit codes of `resmongw status`.
const (
	statusOK         = 0
	statusDegraded   = 1 // the caller's target, or one a session uses, has no verified backend
	statusUsage      = 2
	statusNotRunning = 3
)

// StatusMain runs `resmongw status [--json]`.
func StatusMain(args []string) int {
	fs := flag.NewFlagSet("resmongw status", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	socketFlag := fs.String("socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
	if err := fs.Parse(args); err != nil {
		return statusUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "resmongw status: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return statusUsage
	}
	socket, err := paths.Socket(*socketFlag, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resmongw status:", err)
		return statusUsage
	}
	st, err := fetchStatus(socket)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			notRunning(os.Stdout, socket, *asJSON, errors.Is(err, syscall.ENOENT), os.Getenv)
			return statusNotRunning
		}
		fmt.Fprintln(os.Stderr, "resmongw status:", err)
		return statusDegraded
	}
	if *asJSON {
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Println(string(b))
	} else {
		renderStatus(os.Stdout, st, time.Now())
	}
	if st.OK {
		return statusOK
	}
	return statusDegraded
}

// notRunning explains why no daemon answered at socket and what to do about it.
func notRunning(w io.Writer, socket string, asJSON, noSocket bool, getenv func(string) string) {
	holder := 0
	if noSocket {
		holder = endpoint.LockHolder(socket)
	}
	installed := serviceInstalled(getenv)
	if asJSON {
		v := map[string]any{"running": holder > 0, "socket": socket, "ok": false, "service_installed": installed}
		if holder > 0 {
			v["pid"] = holder
			v["socket_missing"] = true
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(w, string(b))
		return
	}
	switch {
	case holder > 0:
		fmt.Fprintf(w, "resmongw is running but unreachable: %s.\n", endpoint.SocketGone(holder, socket))
	case installed:
		fmt.Fprintf(w, "resmongw is not running (no daemon at %s).\n"+
			"The per-user service is installed: start it with 'resmongw start'. Or run 'resmongw serve' yourself;\n"+
			"a harness running 'resmongw stdio' also starts it on demand.\n", socket)
	default:
		fmt.Fprintf(w, "resmongw is not running (no daemon at %s).\n"+
			"Start it with 'resmongw serve', or install the per-user service with 'resmongw install'.\n", socket)
	}
}

// fetchStatus asks the daemon, sending our own environment so our target is evaluated too.
func fetchStatus(socket string) (*Status, error) {
	c, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(statusSettle + 5*time.Second))
	if _, err := c.Write(endpoint.Line(endpoint.NewPreamble(endpoint.KindStatus, os.Getenv, "resmongw status"))); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(c, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading status: %w", err)
	}
	var reply endpoint.Reply
	if json.Unmarshal(b, &reply) == nil && reply.Error != "" {
		return nil, fmt.Errorf("the daemon refused: %s", reply.Error)
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("unreadable status from the daemon: %w", err)
	}
	return &st, nil
}

// renderStatus prints the human form.
func renderStatus(w io.Writer, st *Status, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	d := st.Daemon
	fmt.Fprintf(tw, "resmongw %s\tpid %d, up %s\n", d.Version, d.PID, roundDur(time.Duration(d.UptimeSeconds*float64(time.Second))))
	fmt.Fprintf(tw, "socket\t%s\n", d.Socket)
	fmt.Fprintf(tw, "log\t%s\n", d.LogFile)
	number := map[string]int{} // targets are numbered for the session lines; keys are long
	for i, t := range st.Targets {
		number[t.Key] = i + 1
		fmt.Fprintln(tw)
		caller := ""
		switch {
		case t.Caller:
			caller = " (this shell's environment)"
		case t.Idle:
			caller = " (idle: no session uses it; not counted in the exit code)"
		}
		fmt.Fprintf(tw, "target %d%s\t%d session(s)\n", i+1, caller, t.Sessions)
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
			fmt.Fprintf(tw, "  backend\tverified: %s, version %s, schema %s, runtime %s\n", b.BaseURL, b.Version, schema, rid)
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
		client := s.Client
		if client == "" {
			client = "?"
		}
		if s.ClientName != "" { // what the harness calls itself, then what launched the shim
			client = strings.TrimSpace(s.ClientName+" "+s.ClientVersion) + " via " + client
		}
		fmt.Fprintf(tw, "session %d\t%s (shim pid %d, harness pid %d), target %d, for %s\n",
			s.ID, client, s.PID, s.HarnessPID, number[s.Target], roundDur(now.Sub(s.Since)))
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
