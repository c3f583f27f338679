package activity

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/spf13/pflag"
)

// Options are `resmongw activity`'s flags.
type Options struct {
	N      int
	Since  string
	Follow bool
	JSON   bool
	Socket string
	// Getenv is the caller's environment; nil = os.Getenv. Stop, when set, ends a follow (tests);
	// otherwise Ctrl-C does.
	Getenv func(string) string
	Stop   <-chan struct{}
}

// BindFlags declares activity's flags on fs, bound to o; the CLI shows and parses exactly these.
func BindFlags(fs *pflag.FlagSet, o *Options) {
	fs.IntVarP(&o.N, "n", "n", 20, "show the last `N` calls (0: every call kept)")
	fs.StringVar(&o.Since, "since", "", "only calls since `WHEN`: a duration back from now (90m, 24h) or a time (2026-12-05T10:00:00Z)")
	fs.BoolVarP(&o.Follow, "f", "f", false, "then follow: print each new call as it finishes, until Ctrl-C")
	fs.BoolVar(&o.JSON, "json", false, "print JSON Lines (time, session, client, tool, write, outcome, confirmation, duration_ms)")
	fs.StringVar(&o.Socket, "socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
}

// Exit codes of `resmongw activity`.
const (
	exitOK         = 0
	exitFailed     = 1
	exitUsage      = 2
	exitNotRunning = 3
)

// Main runs `resmongw activity`. The records come from the daemon over its socket: the daemon
// keeps them (in memory, reloaded from its file at start), so the CLI needs no file path that
// depends on the daemon's environment, reads them through the same checked dial as every
// client, and -f is the daemon pushing each record as it happens, with no polling and no race
// with the file's rotation.
func Main(o Options, stdout, stderr io.Writer) int {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	since, err := parseSince(o.Since, time.Now())
	if err != nil || o.N < 0 {
		if err == nil {
			err = errors.New("-n must not be negative")
		}
		fmt.Fprintln(stderr, "resmongw activity:", err)
		return exitUsage
	}
	socket, err := paths.Socket(o.Socket, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "resmongw activity:", err)
		return exitUsage
	}
	c, br, history, err := openRecord(socket, getenv)
	if err != nil {
		if sessionwire.IsDown(err) {
			fmt.Fprintf(stderr, "resmongw activity: no daemon is running at %s, so nothing is being recorded.\n"+
				"The calls of earlier runs are shown again once it runs: 'resmongw start' (or any harness session) starts it.\n", socket)
			return exitNotRunning
		}
		fmt.Fprintln(stderr, "resmongw activity:", err)
		return exitFailed
	}
	defer func() {
		if c != nil { // nil after a failed reconnect
			c.Close()
		}
	}()
	var seen shown
	history = seen.after(history, since)
	if o.N > 0 && len(history) > o.N {
		history = history[len(history)-o.N:]
	}
	p := newPrinter(stdout, o.JSON)
	if len(history) == 0 && !o.JSON && !o.Follow {
		fmt.Fprintln(stdout, "no tool calls recorded yet")
		return exitOK
	}
	p.print(history)
	if !o.Follow {
		return exitOK
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	for {
		if !follow(c, br, p, &seen, o.Stop, sigs) {
			return exitOK
		}
		// The daemon went away (a restart, an upgrade's hand-over) or cut us off because we
		// fell behind: follow the next one. Its history holds what we missed; seen keeps
		// what was printed from being printed twice.
		c.Close()
		fmt.Fprintln(stderr, "resmongw activity: the daemon went away or cut us off; following again once one answers (Ctrl-C ends)")
		for {
			select {
			case <-sigs:
				return exitOK
			case <-o.Stop:
				return exitOK
			case <-time.After(reconnectEvery):
			}
			if c, br, history, err = openRecord(socket, getenv); err == nil {
				break
			}
			if !sessionwire.IsDown(err) && !errors.Is(err, errNoAnswer) {
				fmt.Fprintln(stderr, "resmongw activity:", err)
				return exitFailed
			}
		}
		p.print(seen.after(history, since))
	}
}

// reconnectEvery is how often -f tries for a daemon again once its daemon went away: often
// enough that a restart's gap is short, rarely enough to cost nothing while none runs.
const reconnectEvery = 500 * time.Millisecond

// errNoAnswer is a daemon that accepted but did not answer: one starting or stopping.
var errNoAnswer = errors.New("no answer from the daemon")

// openRecord asks the daemon at socket for its record: the records it keeps, then (on the
// connection returned) each new one. An error for which sessionwire.IsDown holds means no
// daemon runs.
func openRecord(socket string, getenv func(string) string) (*net.UnixConn, *bufio.Reader, []Record, error) {
	c, err := sessionwire.Dial(socket)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*net.UnixConn, *bufio.Reader, []Record, error) {
		c.Close()
		return nil, nil, nil, err
	}
	if _, err := c.Write(sessionwire.Line(sessionwire.NewPreamble(sessionwire.KindActivity, getenv, "resmongw activity"))); err != nil {
		return fail(fmt.Errorf("asking the daemon: %w", err))
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, err := sessionwire.ReadReply(br)
	switch {
	case err != nil:
		return fail(fmt.Errorf("%w: %v", errNoAnswer, err))
	case !reply.OK && strings.Contains(reply.Error, "unknown preamble kind"):
		return fail(fmt.Errorf("the running daemon (%s) predates the activity record; restart it: resmongw restart", orUnknown(reply.Version)))
	case !reply.OK:
		return fail(fmt.Errorf("the daemon refused: %s", reply.Error))
	}
	var history []Record
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return fail(fmt.Errorf("reading the record: %w", err))
		}
		if string(line) == sessionwire.HistoryEnd {
			break
		}
		var r Record
		if json.Unmarshal(line, &r) == nil {
			history = append(history, r)
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	return c, br, history, nil
}

// shown is what has been printed, so that the history of a daemon followed again prints only
// what came after: records are in time order, and those at the last time printed are told
// apart by their contents.
type shown struct {
	last   time.Time
	atLast map[string]bool
}

// after keeps the records from since on that were not printed yet, and counts them printed.
func (s *shown) after(rs []Record, since time.Time) []Record {
	var out []Record
	for _, r := range rs {
		if r.Time.Before(since) || !s.add(r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// add counts r printed; false when it was already.
func (s *shown) add(r Record) bool {
	key := string(Line(r))
	switch {
	case r.Time.Before(s.last):
		return false
	case r.Time.Equal(s.last):
		if s.atLast[key] {
			return false
		}
	default:
		s.last, s.atLast = r.Time, map[string]bool{}
	}
	s.atLast[key] = true
	return true
}

// follow prints each record the daemon sends until stop or a signal (false) or until the
// connection ends: the daemon went away or cut us off (true).
func follow(c *net.UnixConn, br *bufio.Reader, p *printer, seen *shown, stop <-chan struct{}, sigs <-chan os.Signal) bool {
	type next struct {
		r   Record
		err error
	}
	lines := make(chan next, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			line, err := br.ReadBytes('\n')
			var r Record
			if err == nil {
				err = json.Unmarshal(line, &r)
			}
			select {
			case lines <- next{r, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case n := <-lines:
			if n.err != nil {
				return true
			}
			if seen.add(n.r) {
				p.print([]Record{n.r})
			}
		case <-sigs:
			c.Close()
			return false
		case <-stop:
			c.Close()
			return false
		}
	}
}

// parseSince reads --since: empty (everything), a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (90m, 24h) nor a time (2026-12-05T10:00:00Z)", s)
}

// printer writes records as a table (the header once) or as JSON Lines.
type printer struct {
	w      io.Writer
	json   bool
	header bool
}

func newPrinter(w io.Writer, asJSON bool) *printer { return &printer{w: w, json: asJSON} }

func (p *printer) print(rs []Record) {
	if p.json {
		for _, r := range rs {
			_, _ = p.w.Write(Line(r))
		}
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if !p.header {
		fmt.Fprintln(tw, "TIME\tSESSION\tCLIENT\tTOOL\tKIND\tOUTCOME\tCONFIRMED\tTOOK")
		p.header = true
	}
	for _, r := range rs {
		kind := "read"
		if r.Write {
			kind = "write"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("Jan _2 15:04:05"), r.Session,
			orDash(strings.TrimSpace(r.Client+" "+r.ClientVersion)), r.Tool, kind, r.Outcome, orDash(r.Confirmation),
			took(r.DurationMS))
	}
	tw.Flush()
}

func took(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orUnknown(v string) string {
	if v == "" {
		return "an older version"
	}
	return "version " + v
}
