// Package resmonsim simulates the resmon backend's local HTTP API (its token guard, state files and routes over a seeded corpus) for tests, benchmarks and demos; it shares no code with the gateway.
package resmonsim

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Main runs `resmongw dev backend`: a simulated backend until SIGTERM/SIGINT (clean stop,
// exit 0); SIGHUP restarts it on the same port with a new token and runtime id. It logs to
// stderr only and never prints the token.
func Main(args []string) int { return run(args, os.Stderr) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("resmongw dev backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 0, "port to listen on (0 = a free one, printed at start)")
	stateDir := fs.String("state-dir", "", "state directory for the token file (default: resmon's own)")
	portFile := fs.String("port-file", "", `port file path ("" = <state-dir>/resmon.port, "-" = none)`)
	version := fs.String("version", DefaultVersion, "version /api/health reports")
	delay := fs.Duration("delay", 0, "delay every reply by this much")
	runDuration := fs.Duration("run-duration", 2*time.Second, "how long a started run stays running")
	empty := fs.Bool("empty", false, "start with an empty corpus")
	daemonLock := fs.Bool("daemon-lock", false, "also write and flock <state-dir>/daemon.lock, as the app's background daemon does")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "resmongw dev backend: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *stateDir == "" {
		d, err := defaultStateDir()
		if err != nil {
			fmt.Fprintln(stderr, "resmongw dev backend: no state directory:", err)
			return 1
		}
		*stateDir = d
	}
	// Subscribe before starting so a signal sent right after the start line is not lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	sim, err := Start(Options{Port: *port, StateDir: *stateDir, PortFile: *portFile, Version: *version,
		RunDuration: *runDuration, EmptyCorpus: *empty, DaemonLock: *daemonLock})
	if err != nil {
		fmt.Fprintln(stderr, "resmongw dev backend:", err)
		return 1
	}
	sim.SetDelay(*delay)
	fmt.Fprintf(stderr, "resmon simulator (SIMULATED DATA) listening on %s, state dir %s\n", sim.BaseURL(), *stateDir)
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
