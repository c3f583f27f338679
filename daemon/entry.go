// Package daemon is the long-lived per-user gateway: the MCP socket, sessions bound to
// targets, hot swap across backend restarts, status, lifecycle and logging.
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

	"github.com/resmongw/resmongw/proxy"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// RequestTimeoutEnv sets serve's default --request-timeout.
const RequestTimeoutEnv = "RESMONGW_REQUEST_TIMEOUT"

// Version is the gateway's version, reported by status and `resmongw version`.
var Version = "0.1.0-dev"

// ServeMain runs `resmongw serve`: exit 0 after a signal-driven shutdown, 1 when another
// daemon holds the lock or startup fails, 2 on bad flags.
func ServeMain(args []string) int {
	fs := flag.NewFlagSet("resmongw serve", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	socketFlag := fs.String("socket", "", "socket path (default: $"+endpoint.SocketEnv+" or the per-user default)")
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
	socket, err := endpoint.SocketPath(*socketFlag, os.Getenv)
	if err != nil {
		return failf("%v", err)
	}
	logFile := *logFlag
	if logFile == "" {
		if logFile, err = defaultLogFile(os.Getenv); err != nil {
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

	// Order matters: private dir, then the lock, and only then touch the socket path, so a
	// second daemon can never unlink the socket of the first.
	dir := socketDir(socket)
	if err := privateDir(dir); err != nil {
		log.Error("socket directory", zap.Error(err))
		return failf("%v", err)
	}
	lock, err := acquireLock(filepath.Join(dir, "daemon.lock"))
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
		ln: ln, ctx: ctx, sessions: map[uint64]*session{}, conns: map[net.Conn]struct{}{},
		upstream: &proxy.UpstreamOptions{Client: &proxy.ClientOptions{RequestTimeout: timeout}},
	}
	d.targets = &targets{m: map[string]*target{}, idleTTL: *idle, make: d.newTarget, log: log}
	log.Info("daemon started", zap.String("version", Version), zap.Int("pid", os.Getpid()),
		zap.String("socket", socket), zap.Duration("request_timeout", timeout))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	served := make(chan struct{})
	go func() { d.serve(); close(served) }()
	select {
	case sig := <-sigs:
		log.Info("shutting down", zap.String("signal", sig.String()))
	case <-served:
		log.Error("listener stopped unexpectedly")
	}
	d.shutdown()
	cancel()
	log.Info("daemon stopped")
	return 0
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
