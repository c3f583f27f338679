// Package resmonsim simulates the resmon backend's local HTTP API (its token guard, state files and routes over a seeded corpus) for tests, benchmarks and demos; it shares no code with the gateway.
package resmonsim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// CommandOptions are `resmongw dev backend`'s flags: the simulator's Options and the delay
// of every reply.
type CommandOptions struct {
	Options
	Delay time.Duration
}

// BindFlags declares dev backend's flags on fs, bound to o.
func BindFlags(fs *pflag.FlagSet, o *CommandOptions) {
	fs.IntVar(&o.Port, "port", 0, "port to listen on (0 = a free one, printed at start)")
	fs.StringVar(&o.StateDir, "state-dir", "", "state directory for the token and port files (default: a new private directory, removed at exit)")
	fs.StringVar(&o.PortFile, "port-file", "", `port file path ("" = <state-dir>/resmon.port, "-" = none)`)
	fs.StringVar(&o.Version, "version", DefaultVersion, "version /api/health reports")
	fs.DurationVar(&o.Delay, "delay", 0, "delay every reply by this much")
	fs.DurationVar(&o.RunDuration, "run-duration", 2*time.Second, "how long a started run stays running")
	fs.BoolVar(&o.EmptyCorpus, "empty", false, "start with an empty corpus")
	fs.IntVar(&o.Papers, "papers", 0, `add this many generated papers (a keyword search for "model" finds them all)`)
	fs.BoolVar(&o.DaemonLock, "daemon-lock", false, "also write and flock <state-dir>/daemon.lock, as the app's background daemon does")
}

// Main runs `resmongw dev backend` with o: a simulated backend until SIGTERM/SIGINT (clean
// stop, exit 0); SIGHUP restarts it on the same port with a new token and runtime id. It logs
// to stderr only and never prints the token. Without --state-dir it works in a fresh private
// directory, removed at the end; it never writes into a resmon state directory or over another
// backend's port file. readPortFile reads an existing port file of --state-dir before the
// simulator uses that directory: the binary passes the gateway's checked read (a regular file
// of the user's own, opened so that a FIFO there is refused instead of hanging the read),
// since the simulator itself imports nothing of the gateway.
func Main(o CommandOptions, stderr io.Writer, readPortFile func(path string) ([]byte, error)) int {
	f := &o.Options
	temp := f.StateDir == ""
	if temp {
		d, err := os.MkdirTemp("", "resmonsim-")
		if err != nil {
			fmt.Fprintln(stderr, "resmongw dev backend: no state directory:", err)
			return 1
		}
		defer os.RemoveAll(d)
		f.StateDir = d
	} else if err := checkStateDir(f.StateDir, f.PortFile, readPortFile); err != nil {
		fmt.Fprintln(stderr, "resmongw dev backend:", err)
		return 1
	}
	// Subscribe before starting so a signal sent right after the start line is not lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	sim, err := Start(*f)
	if err != nil {
		fmt.Fprintln(stderr, "resmongw dev backend:", err)
		return 1
	}
	sim.SetDelay(o.Delay)
	fmt.Fprintf(stderr, "resmon simulator (SIMULATED DATA) listening on %s, state dir %s\n", sim.BaseURL(), f.StateDir)
	fmt.Fprint(stderr, nextSteps(f.StateDir, temp))
	for sig := range sigs {
		if sig == syscall.SIGHUP {
			if err := sim.Restart(RestartOptions{}); err != nil {
				fmt.Fprintln(stderr, "resmongw dev backend: restart failed:", err)
				return 1
			}
			fmt.Fprintf(stderr, "resmon simulator restarted on %s (runtime id %s)\n", sim.BaseURL(), sim.RuntimeID())
			continue
		}
		if err := sim.Stop(); err != nil {
			fmt.Fprintln(stderr, "resmongw dev backend: stop:", err)
			return 1
		}
		fmt.Fprintln(stderr, "resmon simulator stopped")
		return 0
	}
	return 0
}

// checkStateDir refuses a directory the simulator must not write into: resmon's own state
// directory (a harness configured for the real app would read invented papers), or one whose
// port file names a running backend (writing over it would redirect that backend's clients,
// and removing it at exit would break them).
func checkStateDir(dir, portFile string, read func(string) ([]byte, error)) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, real := range resmonStateDirs() {
		if sameDir(abs, real) {
			return fmt.Errorf("%s is resmon's own state directory; the simulator never writes there (leave --state-dir out for a private directory)", dir)
		}
	}
	pf := portFile
	switch pf {
	case "-":
		return nil
	case "":
		pf = filepath.Join(abs, "resmon.port")
	}
	port, ok, err := livePort(pf, read)
	if err != nil {
		return fmt.Errorf("port file %s: %v; the simulator will not use this state directory", pf, err)
	}
	if ok {
		return fmt.Errorf("%s holds the port file of a running backend (%s: port %d answers); the simulator will not take it over (leave --state-dir out for a private directory)", dir, pf, port)
	}
	return nil
}

// livePort reads a port file and reports whether something listens on that loopback port. A
// port file naming a dead port (a crashed backend's) is not live: the simulator may replace it.
// A port file that is there but cannot be trusted (not a regular file, another user's) is an
// error: the simulator does not use that directory.
func livePort(portFile string, read func(string) ([]byte, error)) (int, bool, error) {
	b, err := read(portFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || port < 1 || port > 65535 {
		return 0, false, nil
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return port, false, nil
	}
	c.Close()
	return port, true, nil
}

// sameDir compares two directories by path, and by inode where both exist.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// nextSteps is how to use the simulator once it runs: the gateway finds it through its state
// directory, like resmon's own.
func nextSteps(dir string, temp bool) string {
	q := shellQuote(dir)
	s := "Use it from another terminal:\n" +
		"  what the gateway sees (marked SIMULATED; run 'resmongw start' first when no daemon runs):\n" +
		"    RESMON_STATE_DIR=" + q + " resmongw status\n" +
		"  a harness entry that uses it (claude-code, codex, cursor or claude-desktop):\n" +
		"    resmongw config claude-code --state-dir " + q + "\n"
	if temp {
		s += "This directory goes when the simulator stops; for an entry that outlives it, pass --state-dir DIR.\n"
	}
	return s + "Ctrl-C stops it.\n"
}

// shellQuote quotes a path for a shell when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
