package resmonsim

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Options configures a simulated backend.
type Options struct {
	Port        int           // 0 = pick a free loopback port
	StateDir    string        // required: token file api-token-<port> goes here (created 0700 if missing)
	PortFile    string        // "" = <StateDir>/resmon.port; "-" = write no port file
	Version     string        // default "2.3.0"
	NoIdentity  bool          // pre-2.3 backend: health and executions carry no "identity"
	Legacy      bool          // pre-2.2 backend: no token guard and no token file at all
	RunDuration time.Duration // how long a started run stays "running" before "completed" (default 50ms)
	Seed        bool          // unused: the corpus is always seeded unless EmptyCorpus
	EmptyCorpus bool          // start with no papers, routines, executions or profiles
	DaemonLock  bool          // also write <StateDir>/daemon.lock, as the app's daemon does
	// Papers adds that many generated papers to the corpus (also with EmptyCorpus), each
	// found by a keyword search for "model": a large corpus for tests and benchmarks.
	Papers int
}

// DefaultVersion is the resmon release the simulator imitates.
const DefaultVersion = "2.3.0"

// SchemaVersion is the database schema of resmon 2.3.0.
const SchemaVersion = 21

// Fault is an injected failure for requests whose path starts with PathPrefix. It applies
// after the guard, so refusals stay faithful.
type Fault struct {
	PathPrefix    string
	Status        int    // 0 = 500 (or 200 with MalformedJSON)
	Body          string // "" = a FastAPI-style {"detail": …}
	EmptyBody     bool   // reply with no body at all (Body is ignored)
	ContentType   string // "" = application/json
	MalformedJSON bool   // reply with a truncated JSON body
	Drop          bool   // close the connection without replying (a transport error)
	Count         int    // replies to fault; 0 = until cleared
}

// Recorded is one request the simulator received.
type Recorded struct {
	Method, Path, RawQuery, Host, Origin string
	HasAuth, AuthOK                      bool
	Status                               int
	RuntimeID                            string // of the instance that answered
	Body                                 []byte
}

// RestartOptions shapes a simulated app restart.
type RestartOptions struct {
	NewPort bool          // bind a new free port instead of the old one
	InPlace bool          // write files by truncate+write instead of temp+rename
	Delay   time.Duration // gap between stop and start
	// LateFiles restarts as a crash followed by a quick start on the same port would look
	// to a client: the old instance's files stay, and the new instance writes its own only
	// when its first request arrives, before answering it. A client still holding the old
	// token then reaches the new instance before any file changes, every time (the app's own
	// window is a few milliseconds).
	LateFiles bool
}

// Sim is a running simulated backend. The corpus survives restarts (it is the database);
// the token, runtime id, pid-like identity and listener do not.
type Sim struct {
	opts Options

	mu          sync.Mutex // guards everything below and the corpus
	inst        *instance  // nil while stopped
	port        int
	token       string
	runtimeID   string
	startedAt   time.Time
	version     string
	killed      bool      // the last stop was a crash: reconcile running rows as owner_dead
	lateFiles   *instance // the instance whose files wait for its first request (LateFiles)
	lateInPlace bool
	lock        *os.File // daemon.lock, flocked, when Options.DaemonLock
	delay       time.Duration
	pathDelay   time.Duration // replaces delay for paths under pathPrefix
	pathPrefix  string
	faults      []*Fault
	requests    []*Recorded
	data        *corpus
}

// instance is one serving generation: one listener, one http.Server.
type instance struct {
	srv       *http.Server
	ln        net.Listener
	port      int
	token     string
	runtimeID string
	done      chan struct{}
}

// Start binds 127.0.0.1, writes the port file then the token file, and serves.
func Start(opts Options) (*Sim, error) {
	if opts.StateDir == "" {
		return nil, errors.New("resmonsim: Options.StateDir is required")
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.RunDuration <= 0 {
		opts.RunDuration = 50 * time.Millisecond
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("resmonsim: state dir: %w", err)
	}
	s := &Sim{opts: opts, version: opts.Version}
	s.data = newCorpus(!opts.EmptyCorpus, opts.Papers)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(opts.Port, false, false); err != nil {
		return nil, err
	}
	return s, nil
}

// startLocked binds, mints a new identity, reconciles the corpus and writes the files.
func (s *Sim) startLocked(port int, inPlace, lateFiles bool) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("resmonsim: listen: %w", err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	s.token = newToken()
	s.runtimeID = newUUID4()
	s.startedAt = time.Now().UTC()
	s.data.reconcile(s.killed, s.runtimeID)
	s.killed = false
	inst := &instance{ln: ln, port: s.port, token: s.token, runtimeID: s.runtimeID, done: make(chan struct{})}
	inst.srv = &http.Server{
		Handler:           s.handler(inst),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Second, // uvicorn's default keep-alive timeout
		ErrorLog:          nil,
	}
	s.inst = inst
	s.lateFiles = nil
	if lateFiles {
		s.lateFiles, s.lateInPlace = inst, inPlace
	} else if err := s.writeFilesLocked(inPlace); err != nil {
		_ = ln.Close()
		s.inst = nil
		return err
	}
	go func() {
		defer close(inst.done)
		_ = inst.srv.Serve(ln)
	}()
	return nil
}

func (s *Sim) portFilePath() string {
	switch s.opts.PortFile {
	case "":
		return filepath.Join(s.opts.StateDir, "resmon.port")
	case "-":
		return ""
	}
	return s.opts.PortFile
}

// TokenFile is the path of this instance's token file (it may not exist in Legacy mode).
func (s *Sim) TokenFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenFileLocked()
}

func (s *Sim) tokenFileLocked() string {
	return filepath.Join(s.opts.StateDir, "api-token-"+strconv.Itoa(s.port))
}

// PortFile is the port file path, or "" when none is written.
func (s *Sim) PortFile() string { return s.portFilePath() }

// StateDir is the directory holding the token file.
func (s *Sim) StateDir() string { return s.opts.StateDir }

func (s *Sim) writeFilesLocked(inPlace bool) error {
	write := writeAtomic
	if inPlace {
		write = writeInPlace
	}
	// The app recreates its state directory when it starts, so a restart after the directory
	// was deleted must too.
	if err := os.MkdirAll(s.opts.StateDir, 0o700); err != nil {
		return fmt.Errorf("resmonsim: state dir: %w", err)
	}
	if pf := s.portFilePath(); pf != "" {
		if err := os.MkdirAll(filepath.Dir(pf), 0o700); err != nil {
			return fmt.Errorf("resmonsim: port file dir: %w", err)
		}
	}
	if pf := s.portFilePath(); pf != "" {
		if err := write(pf, []byte(strconv.Itoa(s.port)), 0o644); err != nil {
			return fmt.Errorf("resmonsim: port file: %w", err)
		}
	}
	if !s.opts.Legacy {
		if err := write(s.tokenFileLocked(), []byte(s.token), 0o600); err != nil {
			return fmt.Errorf("resmonsim: token file: %w", err)
		}
	}
	if s.opts.DaemonLock {
		lock, _ := marshalCompact(o("pid", os.Getpid(), "port", s.port, "version", s.version,
			"started_at", s.startedAt.Format("2006-01-02T15:04:05.000000+00:00")))
		path := filepath.Join(s.opts.StateDir, "daemon.lock")
		if err := write(path, lock, 0o600); err != nil {
			return fmt.Errorf("resmonsim: daemon.lock: %w", err)
		}
		// Held under an exclusive flock for the instance's life, as the app's daemon holds it.
		s.releaseLockLocked()
		f, err := lockFile(path)
		if err != nil {
			return fmt.Errorf("resmonsim: daemon.lock: %w", err)
		}
		s.lock = f
	}
	return nil
}

func (s *Sim) releaseLockLocked() {
	if s.lock != nil {
		_ = s.lock.Close() // closing the descriptor drops the flock
		s.lock = nil
	}
}

// writeAtomic creates a temp file with the final mode (no window with a wider one), fsyncs
// and renames it into place, as api_auth does (.api-token-<port>.<pid>.tmp).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if !errors.Is(err, os.ErrExist) {
			return err
		}
		_ = os.Remove(tmp)
		if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode); err != nil {
			return err
		}
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// writeInPlace truncates and rewrites the file, so watchers can observe an empty or partial file.
func writeInPlace(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeFilesLocked removes the port file unconditionally and the token file (and lock)
// only if it still holds this instance's token — a successor's file is left alone.
func (s *Sim) removeFilesLocked() {
	if pf := s.portFilePath(); pf != "" {
		_ = os.Remove(pf)
	}
	if !s.opts.Legacy {
		tf := s.tokenFileLocked()
		if b, err := os.ReadFile(tf); err == nil && string(b) == s.token {
			_ = os.Remove(tf)
		}
	}
	if s.opts.DaemonLock {
		_ = os.Remove(filepath.Join(s.opts.StateDir, "daemon.lock"))
		s.releaseLockLocked()
	}
}

// Port is the bound port.
func (s *Sim) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// BaseURL is http://127.0.0.1:<port>.
func (s *Sim) BaseURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.Port()) }

// Token is the current token (for tests; never print it). "" in Legacy mode is still a
// minted token, but the guard does not ask for it.
func (s *Sim) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// RuntimeID is the current runtime id (a canonical lowercase UUID4).
func (s *Sim) RuntimeID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runtimeID
}

// Stop is a clean shutdown: running executions become interrupted (daemon_restart), the
// port file and our token file are removed, and the listener and connections are closed.
// Stopping a stopped Sim is a no-op.
func (s *Sim) Stop() error {
	s.mu.Lock()
	inst := s.inst
	if inst == nil {
		s.mu.Unlock()
		return nil
	}
	s.inst = nil
	s.data.settle(time.Now(), s.opts.RunDuration)
	s.data.interruptRunning("daemon_restart", "daemon_restart")
	s.removeFilesLocked()
	s.mu.Unlock()
	return shutdown(inst)
}

// Kill is a crash: the listener and every connection close at once and the files stay behind.
func (s *Sim) Kill() error {
	s.mu.Lock()
	inst := s.inst
	s.inst = nil
	if inst != nil {
		s.killed = true
		s.releaseLockLocked() // a dead process holds no flock; its lock file stays behind
	}
	s.mu.Unlock()
	if inst == nil {
		return nil
	}
	err := inst.srv.Close()
	<-inst.done
	return err
}

func shutdown(inst *instance) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := inst.srv.Shutdown(ctx)
	if err != nil {
		err = inst.srv.Close()
	}
	<-inst.done
	return err
}

// Restart stops (cleanly, unless the Sim was killed) and starts again with a new token and
// runtime id, on the same port unless NewPort.
func (s *Sim) Restart(o RestartOptions) error {
	stop := s.Stop
	if o.LateFiles {
		stop = s.Kill
	}
	if err := stop(); err != nil {
		return err
	}
	if o.Delay > 0 {
		time.Sleep(o.Delay)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst != nil {
		return errors.New("resmonsim: started concurrently")
	}
	port := s.port
	if o.NewPort {
		port = 0
	}
	var err error
	// The old socket may linger briefly in the kernel; retry the bind a few times.
	for i := 0; i < 50; i++ {
		if err = s.startLocked(port, o.InPlace, o.LateFiles); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// SetDelay makes every reply wait d (a request whose context ends stops waiting).
func (s *Sim) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// SetPathDelay makes every reply to a path under prefix wait d (0 ends it), in place of
// SetDelay's: a test can hang one endpoint while /api/health, which a gateway re-checks on
// its own schedule, still answers.
func (s *Sim) SetPathDelay(prefix string, d time.Duration) {
	s.mu.Lock()
	s.pathPrefix, s.pathDelay = prefix, d
	s.mu.Unlock()
}

// SetFault adds a fault; the first matching fault wins.
func (s *Sim) SetFault(f Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, &f)
	s.mu.Unlock()
}

// ClearFaults removes every fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// SetVersion changes the version /api/health reports.
func (s *Sim) SetVersion(v string) {
	s.mu.Lock()
	s.version = v
	s.mu.Unlock()
}

// WriteStaleToken overwrites the token file with a valid-looking token that is not ours,
// as a predecessor's leftover file would be.
func (s *Sim) WriteStaleToken() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return writeAtomic(s.tokenFileLocked(), []byte(newToken()), 0o600)
}

// Requests returns every request received, in order.
func (s *Sim) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// ResetRequests forgets the recorded requests.
func (s *Sim) ResetRequests() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

// Settings returns a group's stored values as the GET route would (nil for an unknown group).
func (s *Sim) Settings(group string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data.settingsGet(group)
	if !ok {
		return nil
	}
	b, _ := marshalCompact(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// StoredSetting is the raw app_settings value ("" and false when unset).
func (s *Sim) StoredSetting(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data.settings[key]
	return v, ok
}

// Routine returns a routine as GET /api/routines/{id} would.
func (s *Sim) Routine(id int) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.data.routine(id)
	if r == nil {
		return nil, false
	}
	return toMap(s.data.routineDetail(r)), true
}

// Execution returns an execution as GET /api/executions/{id} would (without identity).
func (s *Sim) Execution(id int) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.settle(time.Now(), s.opts.RunDuration)
	e := s.data.execution(id)
	if e == nil {
		return nil, false
	}
	return toMap(s.data.executionListItem(e)), true
}

// Profile returns a watch profile as GET /api/profiles/{id} would.
func (s *Sim) Profile(id int) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.data.profile(id)
	if p == nil {
		return nil, false
	}
	return toMap(profileJSON(p)), true
}

func toMap(v any) map[string]any {
	b, _ := marshalCompact(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newUUID4() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
