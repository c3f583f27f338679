package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/proxy"
)

// RequestTimeoutEnv sets serve's default --request-timeout.
const RequestTimeoutEnv = "RESMONGW_REQUEST_TIMEOUT"

// Version is the gateway's version, reported by status and `resmongw version`.
var Version = "0.1.0-dev"

// ServeMain runs `resmongw serve`: exit 0 after a signal-driven shutdown (TERM, INT, HUP), 1
// when another daemon holds the lock, startup fails or the listener fails for good (so a
// service manager restarts it), 2 on bad flags.
func ServeMain(args []string) int {
	fs := flag.NewFlagSet("resmongw serve", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	socketFlag := fs.String("socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
	logFlag := fs.String("log-file", "", "log file (default: the per-user state/log directory)")
	foreground := fs.Bool("foreground", false, "also log to stderr (default when stderr is a terminal)")
	idle := fs.Duration("target-idle", 5*time.Minute, "how long a target's watcher outlives its last session")
	timeout := proxy.DefaultRequestTimeout
	if v := os.Getenv(RequestTimeoutEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "resmongw serve: %s=%q is not a positive duration (like 30s)\n", RequestTimeoutEnv, v)
			return 2
		}
		timeout = d
	}
	fs.DurationVar(&timeout, "request-timeout", timeout, "how long one backend request may take, body included ($"+RequestTimeoutEnv+" sets the default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if timeout <= 0 {
		fmt.Fprintln(os.Stderr, "resmongw serve: --request-timeout must be positive")
		return 2
	}
	failf := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "resmongw serve: "+format+"\n", a...)
		return 1
	}
	socket, err := paths.Socket(*socketFlag, os.Getenv)
	if err != nil {
		return failf("%v", err)
	}
	logFile := *logFlag
	if logFile == "" {
		if logFile, err = paths.LogFile(os.Getenv); err != nil {
			return failf("%v", err)
		}
	}
	if logFile, err = filepath.Abs(logFile); err != nil {
		return failf("%v", err)
	}
	log, closeLog, err := newLogger(logFile, *foreground || isTerminal(os.Stderr))
	if err != nil {
		return failf("%v", err)
	}
	defer closeLog()

	// Caught from here on, before the socket exists: a signal that arrives as soon as a
	// client can see the socket is handled once serving starts instead of killing us with the
	// socket left behind. HUP too: a terminal closing under `serve`, or a supervisor's
	// reload, must still flush the log and remove the socket. SIGPIPE is ignored: a write to
	// a vanished stderr reader (--foreground under a pipe) must not kill the daemon.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	signal.Ignore(syscall.SIGPIPE)

	// Order matters: private dir, then the lock, and only then touch the socket path, so a
	// second daemon can never unlink the socket of the first.
	dir := socketDir(socket)
	if err := privateDir(dir); err != nil {
		log.Error("socket directory", zap.Error(err))
		return failf("%v", err)
	}
	lock, err := acquireLock(paths.LockFile(socket))
	if err != nil {
		var ar *errAlreadyRunning
		if errors.As(err, &ar) {
			log.Info("another daemon is running", zap.Int("pid", ar.pid))
		}
		return failf("%v", err)
	}
	defer lock.Release()
	ln, err := listenPrivate(socket)
	if err != nil {
		log.Error("listen", zap.Error(err))
		return failf("listening on %s: %v", socket, err)
	}

	// One P unless GOMAXPROCS says otherwise: the daemon does little CPU work per call and
	// mostly waits on sockets, and with one P a woken goroutine runs where the netpoller found
	// it instead of waking a second thread. Measured on 2 vCPUs (BENCHMARKS.md): daemon CPU per
	// call -27 %, added p50 -40 µs, p99 -300 µs, and no loss of throughput at 100 sessions.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}

	// A CPU profile of the whole run, for performance work (see BENCHMARKS.md).
	if path := os.Getenv("RESMONGW_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &daemon{
		socket: socket, logFile: logFile, started: time.Now(), log: log, sdkLog: newSlogBridge(log),
		ctx: ctx, sessions: map[uint64]*session{}, conns: map[net.Conn]struct{}{},
		upstream: &proxy.UpstreamOptions{Client: &proxy.ClientOptions{RequestTimeout: timeout}},
		failed:   make(chan error, 1), stopReq: make(chan stopMode, 1),
	}
	d.setListener(ln)
	d.lockPath, d.lockFile = paths.LockFile(socket), lock.stat()
	d.targets = &targets{m: map[string]*target{}, idleTTL: *idle, make: d.newTarget, log: log}
	log.Info("daemon started", zap.String("version", Version), zap.Int("pid", os.Getpid()),
		zap.String("socket", socket), zap.Duration("request_timeout", timeout))

	code := d.run(sigs, socketCheck)
	cancel()
	log.Info("daemon stopped")
	return code
}

// run serves until a signal (0) or a listener failure (1), then shuts down.
func (d *daemon) run(sigs <-chan os.Signal, checkEvery time.Duration) int {
	go func() { _ = d.serve() }() // a failure arrives on d.failed
	keepCtx, stopKeeping := context.WithCancel(d.ctx)
	go d.keepSocket(keepCtx, checkEvery)
	code, mode := 0, stopRestart
	select {
	case sig := <-sigs:
		d.log.Info("shutting down", zap.String("signal", sig.String()))
	case mode = <-d.stopReq:
		d.log.Info("shutting down", zap.Stringer("asked_for", mode))
	case err := <-d.failed:
		d.log.Error("listener stopped unexpectedly; exiting so the service manager restarts the daemon", zap.Error(err))
		code = 1
	}
	stopKeeping()
	d.shutdown(mode)
	return code
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
