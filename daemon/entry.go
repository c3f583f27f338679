package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
	"github.com/spf13/pflag"
)

// RequestTimeoutEnv sets serve's default --request-timeout.
const RequestTimeoutEnv = "RESMONGW_REQUEST_TIMEOUT"

// Config is what `resmongw serve` is told. The zero value of each field means its default.
type Config struct {
	Socket     string        // "" = paths.Socket's answer ($RESMONGW_SOCKET, else the per-user default)
	LogFile    string        // "" = paths.LogFile(socket): beside the socket
	Foreground bool          // also log to stderr
	TargetIdle time.Duration // how long a target outlives its last session; 0 = 5m
	// MaxTargets bounds the distinct targets (harness environments naming a resmon) kept at
	// once; 0 = DefaultMaxTargets. Idle targets make room first; past it, with none idle, a
	// new session is refused with the reason.
	MaxTargets int
	// RequestTimeout bounds one backend request; 0 = $RESMONGW_REQUEST_TIMEOUT, else the
	// backend client's default.
	RequestTimeout time.Duration
	// RetryWait bounds how long a read whose backend went away waits for a new one before it
	// answers backend_unavailable; 0 = the backend client's default.
	RetryWait time.Duration
	// ExitWhenIdle, when positive, makes the daemon exit after that long with no session: an
	// autostarted daemon must not outlive its harnesses for ever. The service-managed daemon
	// leaves it 0 and stays.
	ExitWhenIdle time.Duration
	// ConfirmTimeout bounds how long a write's confirmation waits for the person (0: the
	// backend client's default); no answer within it sends nothing.
	ConfirmTimeout time.Duration
	// Getenv reads the daemon's own environment (defaults, profiling); nil = os.Getenv.
	Getenv func(string) string
}

// BindServeFlags declares serve's flags on fs, bound to c; the CLI shows and parses exactly
// these.
func BindServeFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.Socket, "socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
	fs.StringVar(&c.LogFile, "log-file", "", "log file (default: beside the socket, named after it: mcp.sock → mcp.log)")
	fs.BoolVar(&c.Foreground, "foreground", false, "also log to stderr (default when stderr is a terminal)")
	fs.DurationVar(&c.TargetIdle, "target-idle", 5*time.Minute, "how long a target's watcher outlives its last session")
	fs.IntVar(&c.MaxTargets, "max-targets", DefaultMaxTargets, "most distinct resmon targets (harness environments) served at once; idle ones make room first")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 0, "how long one backend request may take, body included (default: $"+RequestTimeoutEnv+", else "+backend.DefaultRequestTimeout.String()+")")
	fs.DurationVar(&c.RetryWait, "retry-wait", 0, "how long a read whose backend went away waits for a new one (default "+backend.DefaultRetryWait.String()+")")
	fs.DurationVar(&c.ConfirmTimeout, "confirm-timeout", mcpserver.DefaultConfirmTimeout, "how long the question before a write waits for the person's answer; no answer sends nothing")
	fs.DurationVar(&c.ExitWhenIdle, "exit-when-idle", 0, "exit after this long with no session (autostarted daemons; 0 = never)")
}

// Server is one daemon, built the same way for `resmongw serve` and for tests: New, then
// Listen, then Run.
type Server struct {
	d        *daemon
	cancel   context.CancelFunc
	closeLog func()
	lock     *instanceLock
	timeout  time.Duration
	idleExit time.Duration
}

// errUsage marks a configuration error the person must fix in the command line (exit 2).
type errUsage struct{ error }

// New resolves c's defaults and opens the log. It does not touch the socket.
func New(c Config) (*Server, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	timeout := c.RequestTimeout
	if timeout == 0 {
		timeout = backend.DefaultRequestTimeout
		if v := getenv(RequestTimeoutEnv); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, errUsage{fmt.Errorf("%s=%q is not a positive duration (like 30s)", RequestTimeoutEnv, v)}
			}
			timeout = d
		}
	}
	if timeout < 0 {
		return nil, errUsage{errors.New("--request-timeout must be positive")}
	}
	if c.RetryWait < 0 {
		return nil, errUsage{errors.New("--retry-wait must not be negative")}
	}
	if c.ConfirmTimeout < 0 {
		return nil, errUsage{errors.New("--confirm-timeout must not be negative")}
	}
	if c.ExitWhenIdle < 0 {
		return nil, errUsage{errors.New("--exit-when-idle must not be negative")}
	}
	if c.MaxTargets < 0 {
		return nil, errUsage{errors.New("--max-targets must not be negative")}
	}
	maxTargets := c.MaxTargets
	if maxTargets == 0 {
		maxTargets = DefaultMaxTargets
	}
	idleTTL := c.TargetIdle
	if idleTTL == 0 {
		idleTTL = 5 * time.Minute
	}
	socket, err := paths.Socket(c.Socket, getenv)
	if err != nil {
		return nil, err
	}
	logFile := c.LogFile
	if logFile == "" {
		logFile = paths.LogFile(socket)
	}
	if logFile, err = filepath.Abs(logFile); err != nil {
		return nil, err
	}
	activityFile := ActivityFile(logFile) // beside the log, even when the log falls back to stderr
	// A log that cannot be opened never stops the daemon: it logs to stderr instead (the
	// journal under the service) and status says so.
	log, closeLog, logErr := newLogger(logFile, c.Foreground)
	if logErr != nil {
		fmt.Fprintf(os.Stderr, "resmongw serve: not logging to a file: %v; logging to stderr\n", logErr)
		log, closeLog = stderrLogger()
		logFile = ""
	}
	d, cancel := newDaemon(socket, logFile, log, newSlogBridge(log), idleTTL,
		&backend.UpstreamOptions{Client: &backend.ClientOptions{RequestTimeout: timeout}, RetryWait: c.RetryWait})
	d.confirm = mcpserver.NewConfirmations(c.ConfirmTimeout)
	if logErr != nil {
		d.logProblem = logErr.Error()
		log.Warn("the log file cannot be opened; logging to stderr", zap.Error(logErr))
	}
	d.targets.max = maxTargets
	d.exe = currentExecutable()
	var closeActivity func()
	d.activity, closeActivity = openActivity(activityFile, log)
	// Session numbers go on from the record's last, so that a number in `resmongw activity`
	// names one session across daemon restarts.
	for _, r := range d.activity.Records() {
		if r.Session > d.nextID.Load() {
			d.nextID.Store(r.Session)
		}
	}
	return &Server{d: d, cancel: cancel, closeLog: func() { closeActivity(); closeLog() }, timeout: timeout, idleExit: c.ExitWhenIdle}, nil
}

// newDaemon is the one place a daemon is put together, for New and for the package's tests
// (which then swap targets.make for a fake backend). cancel ends its context.
func newDaemon(socket, logFile string, log *zap.Logger, sdkLog *slog.Logger, idleTTL time.Duration, upstream *backend.UpstreamOptions) (*daemon, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{
		socket: socket, logFile: logFile, started: time.Now(), log: log, sdkLog: sdkLog,
		ctx: ctx, sessions: map[uint64]*session{}, conns: map[net.Conn]struct{}{},
		upstream: upstream, failed: make(chan error, 1), stopReq: make(chan stopMode, 1),
		activity: activity.New(nil, activityKeep),
		confirm:  mcpserver.NewConfirmations(0),
	}
	d.targets = &targets{m: map[string]*target{}, idleTTL: idleTTL, make: d.newTarget, log: log}
	return d, cancel
}

// Listen makes the socket's private directory, takes the single-instance lock and only then
// binds the socket, so a second daemon can never unlink the socket of the first.
func (s *Server) Listen() (*net.UnixListener, error) {
	d := s.d
	if err := privateDir(socketDir(d.socket)); err != nil {
		d.log.Error("socket directory", zap.Error(err))
		return nil, err
	}
	lock, err := acquireLock(d.socket)
	if err != nil {
		var ar *errAlreadyRunning
		if errors.As(err, &ar) {
			d.log.Info("another daemon is running", zap.Int("pid", ar.pid))
		}
		return nil, err
	}
	// Watched from before it exists: a removal right after it appears must not go unseen
	// (keepSocket starts with Run; the creation's own event only makes it look once).
	d.sockWatch = d.watchSocket()
	ln, err := listenPrivate(d.socket)
	if err != nil {
		d.sockWatch.Close()
		lock.Release()
		d.log.Error("listen", zap.Error(err))
		return nil, fmt.Errorf("listening on %s: %w", d.socket, err)
	}
	s.lock = lock
	d.lockPath, d.lockFile = paths.LockFile(d.socket), lock.stat()
	return ln, nil
}

// Run serves ln until ctx ends (0), a stop or restart is asked for over the socket (0), the
// idle period passes with no session (0), or the listener fails for good (1); then it shuts
// down within bounds, releases the lock and closes the log. A Server runs once.
func (s *Server) Run(ctx context.Context, ln *net.UnixListener) int {
	d := s.d
	defer releaseHeld() // last: whoever asked for the stop sees it done once the lock is free
	defer s.closeLog()
	defer s.lock.Release()
	defer s.cancel()
	d.setListener(ln)
	if s.idleExit > 0 {
		d.startIdleExit(s.idleExit)
	}
	d.log.Info("daemon started", zap.String("version", version.Version), zap.Int("pid", os.Getpid()),
		zap.String("socket", d.socket), zap.Duration("request_timeout", s.timeout),
		zap.Duration("exit_when_idle", s.idleExit))
	sigs := make(chan os.Signal, 1)
	stopRelay := context.AfterFunc(ctx, func() { sigs <- causeSignal{context.Cause(ctx)} })
	defer stopRelay()
	code := d.run(sigs, socketCheck)
	s.cancel()
	d.log.Info("daemon stopped")
	return code
}

// causeSignal names why Run's context ended, for the "shutting down" log line: the signal
// ServeMain received, or the context's error.
type causeSignal struct{ err error }

func (c causeSignal) String() string {
	var s signalError
	if errors.As(c.err, &s) {
		return s.sig.String()
	}
	return c.err.Error()
}
func (causeSignal) Signal() {}

// signalError is the cancel cause ServeMain gives Run's context.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "received " + e.sig.String() }

// ServeMain runs `resmongw serve` with c: exit 0 after a signal-driven shutdown (TERM, INT,
// HUP) or a stop asked for over the socket, 1 when another daemon holds the lock, startup
// fails or the listener fails for good (so a service manager restarts it), 2 on bad settings.
func ServeMain(c Config, stderr io.Writer) int {
	harden() // before any token is read: no core dumps, not dumpable
	failf := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "resmongw serve: "+format+"\n", a...)
		return code
	}
	c.Foreground = c.Foreground || isTerminal(os.Stderr)
	srv, err := New(c)
	if err != nil {
		var u errUsage
		if errors.As(err, &u) {
			return failf(2, "%v", err)
		}
		return failf(1, "%v", err)
	}
	// Caught from here on, before the socket exists: a signal that arrives as soon as a
	// client can see the socket is handled once serving starts instead of killing us with the
	// socket left behind. HUP too: a terminal closing under `serve`, or a supervisor's
	// reload, must still flush the log and remove the socket. SIGPIPE is ignored: a write to
	// a vanished stderr reader (--foreground under a pipe) must not kill the daemon.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	signal.Ignore(syscall.SIGPIPE)

	ln, err := srv.Listen()
	if err != nil {
		srv.closeLog()
		return failf(1, "%v", err)
	}
	sessionwire.SignalListening() // whoever started us stops waiting: connections queue from here

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

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		if sig, ok := <-sigs; ok {
			cancel(signalError{sig})
		}
	}()
	return srv.Run(ctx, ln)
}

// run serves until a signal (0) or a listener failure (1), then shuts down.
func (d *daemon) run(sigs <-chan os.Signal, checkEvery time.Duration) int {
	go func() { _ = d.serve() }() // a failure arrives on d.failed
	keepCtx, stopKeeping := context.WithCancel(d.ctx)
	sw := d.sockWatch
	if sw == nil { // a listener handed over without Listen (tests)
		sw = d.watchSocket()
	}
	go d.keepSocket(keepCtx, checkEvery, sw)
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
	d.stopIdleExit()
	d.shutdown(mode)
	return code
}

// isTerminal reports whether f is a terminal (a person watching): a log to it is written line
// by line. /dev/null, where an autostarted daemon's stderr goes, is a character device but
// no terminal, so that daemon's log stays buffered.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
