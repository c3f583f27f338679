package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/resmongw/resmongw/daemonctl"
	"github.com/resmongw/resmongw/packaging"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/shim"
)

// Bounds of start, stop and restart.
const (
	// stopWait covers the daemon's graceful stop: calls in flight are answered (bounded by
	// the request timeout) before it exits. A daemon whose accept states a longer bound
	// (its request timeout raised) is waited for that long (daemonctl.Control).
	stopWait = 60 * time.Second
	// startWait bounds the wait for a started daemon to listen: a deadline against one that
	// never does, not an estimate. A daemon listens within a fraction of a second on an idle
	// machine, but one started on a loaded machine was seen past 5 s, and start then said it
	// had failed while the daemon came up a moment later.
	startWait = 30 * time.Second
)

// lifecycleCmd is start, stop or restart: they act on whatever daemon serves this user, the
// service's or an autostarted one, through the daemon itself (a control request on its socket,
// which it peer-checks like every connection) and through the service manager when the
// service is installed.
func lifecycleCmd(verb, short string, stdout, stderr io.Writer) *cobra.Command {
	var socket string
	var o packaging.ServiceOptions
	return withFlags(&cobra.Command{
		Use: verb, Short: short, GroupID: "manage", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := newLifecycle(socket, stdout, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "resmongw %s: %v\n", verb, err)
				return exitCode(2)
			}
			if o.DryRun {
				return done(l.dryRun(verb))
			}
			switch verb {
			case "start":
				return done(l.start())
			case "stop":
				return done(l.stop())
			default:
				return done(l.restart())
			}
		},
	}, func(fs *pflag.FlagSet) {
		packaging.BindServiceFlags(fs, verb, &o)
		fs.StringVar(&socket, "socket", "", "the daemon's socket (default: $"+paths.SocketEnv+" or the per-user default)")
	})
}

type lifecycle struct {
	socket string
	// service: the per-user service is installed and this is its socket (an explicit socket
	// means a private daemon the service does not run).
	service        bool
	stdout, stderr io.Writer
}

func newLifecycle(socketFlag string, stdout, stderr io.Writer) (*lifecycle, error) {
	socket, err := paths.Socket(socketFlag, os.Getenv)
	if err != nil {
		return nil, err
	}
	explicit := socketFlag != "" || os.Getenv(paths.SocketEnv) != ""
	return &lifecycle{socket: socket, service: !explicit && daemonctl.ServiceInstalled(os.Getenv), stdout: stdout, stderr: stderr}, nil
}

func (l *lifecycle) dryRun(verb string) int {
	if pid := sessionwire.LockHolder(l.socket); pid > 0 && verb != "start" {
		fmt.Fprintf(l.stdout, "would ask the daemon at %s (pid %d) to %s, and wait for it to exit\n", l.socket, pid, verb)
	}
	switch {
	case l.service && verb != "stop":
		return packaging.ServiceMain("start", packaging.ServiceOptions{DryRun: true}, l.stdout, l.stderr)
	case l.service:
		return packaging.ServiceMain("stop", packaging.ServiceOptions{DryRun: true}, l.stdout, l.stderr)
	case verb != "stop":
		fmt.Fprintf(l.stdout, "would start 'resmongw serve --socket %s' in the background\n", l.socket)
	}
	return 0
}

// ask sends the control request and reports what happened: ran says whether a daemon was
// there to ask, idle is its idle period (0: it stayed until asked).
func (l *lifecycle) ask(kind string) (ran bool, idle time.Duration, code int) {
	st, err := daemonctl.Control(l.socket, kind, stopWait)
	switch {
	case errors.Is(err, daemonctl.ErrNotRunning):
		return false, 0, 0
	case err != nil:
		fmt.Fprintf(l.stderr, "resmongw %s: the daemon at %s: %v\n", kind, l.socket, err)
		return true, 0, 1
	}
	fmt.Fprintf(l.stdout, "stopped the daemon (pid %d, version %s) at %s\n", st.PID, st.Version, l.socket)
	return true, st.ExitWhenIdle, 0
}

func (l *lifecycle) stop() int {
	// The daemon first, asked to stop: its sessions end. A service stop alone would send
	// SIGTERM, which sessions take for a restart and reconnect through.
	ran, _, code := l.ask(sessionwire.KindStop)
	if code != 0 {
		return code
	}
	if l.service {
		return packaging.ServiceMain("stop", packaging.ServiceOptions{}, l.stdout, l.stderr)
	}
	if !ran {
		fmt.Fprintf(l.stdout, "resmongw is not running (no daemon at %s); nothing to stop.\n", l.socket)
	}
	return 0
}

// restart brings back the kind of daemon that ran: one that exits when idle (autostarted)
// comes back with the same idle period, one that stays (`start`, or an older daemon that does
// not say) stays; with none running it starts one that stays, as start does.
func (l *lifecycle) restart() int {
	_, idle, code := l.ask(sessionwire.KindRestart)
	if code != 0 {
		return code
	}
	// Sessions' shims reconnect and may start a daemon themselves meanwhile; whichever
	// starts first takes the lock and the others exit, so either way one daemon serves.
	return l.startNew(idle)
}

func (l *lifecycle) start() int {
	if pid := sessionwire.LockHolder(l.socket); pid > 0 && daemonctl.WaitServing(l.socket, 0) == nil {
		fmt.Fprintf(l.stdout, "resmongw is already running (pid %d) at %s\n", pid, l.socket)
		return 0
	}
	return l.startNew(0)
}

// startNew starts a daemon through the service when it is installed, else detached in the
// background (exiting after idle without sessions when it is positive, as an autostarted one
// does), and waits until it serves.
func (l *lifecycle) startNew(idle time.Duration) int {
	if l.service {
		if code := packaging.ServiceMain("start", packaging.ServiceOptions{}, l.stdout, l.stderr); code != 0 {
			return code
		}
	} else if _, err := shim.StartDaemon(l.socket, idle); err != nil {
		fmt.Fprintf(l.stderr, "resmongw: starting the daemon: %v\n", err)
		return 1
	}
	if err := daemonctl.WaitServing(l.socket, startWait); err != nil {
		fmt.Fprintf(l.stderr, "resmongw: %v; run 'resmongw serve --foreground' to see why\n", err)
		return 1
	}
	how := "in the background"
	if l.service {
		how = "by the service"
	} else if idle > 0 {
		how += fmt.Sprintf(" (it exits after %s without sessions, as the one it replaced did)", idle)
	}
	fmt.Fprintf(l.stdout, "started the daemon (pid %d) %s at %s\n", sessionwire.LockHolder(l.socket), how, l.socket)
	return 0
}

// installCmd is `resmongw install`. When a daemon already serves the default socket (one a
// harness autostarted), the service could not take the lock and would fail to start; so the
// unit goes in first, then that daemon is asked to restart (its sessions reconnect, through
// the service now), then the service starts.
func installCmd(stdout, stderr io.Writer) *cobra.Command {
	var o packaging.ServiceOptions
	return withFlags(&cobra.Command{
		Use: "install", Short: "install and start the per-user service (systemd user unit / launchd agent)",
		GroupID: "manage", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			socket, err := paths.DefaultSocket()
			if o.DryRun || o.NoStart || err != nil || sessionwire.LockHolder(socket) == 0 {
				return done(packaging.ServiceMain("install", o, stdout, stderr))
			}
			if code := packaging.ServiceMain("install", packaging.ServiceOptions{NoStart: true}, stdout, stderr); code != 0 {
				return exitCode(code)
			}
			l := &lifecycle{socket: socket, service: true, stdout: stdout, stderr: stderr}
			if _, _, code := l.ask(sessionwire.KindRestart); code != 0 {
				return exitCode(code)
			}
			return done(l.startNew(0))
		},
	}, func(fs *pflag.FlagSet) { packaging.BindServiceFlags(fs, "install", &o) })
}
