package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/sessionwire"
)

// Mode names, in the order the overhead table lists them. The go-sdk rows use the MCP SDK's
// client, as the in-process rows must; the raw rows write and read the JSON-RPC lines
// themselves, as a harness that is not go-sdk does, so the gap between a go-sdk row and its
// raw twin is the go-sdk client's own cost, which a real harness does not pay.
const (
	ModeDirect    = "direct HTTP to the simulator (baseline)"
	ModeStub      = "in-process MCP server, backend stubbed, go-sdk client (SDK + tool layer only)"
	ModeInProc    = "in-process MCP server, go-sdk client (no socket, no shim)"
	ModeSocket    = "daemon over its socket, go-sdk client (no shim)"
	ModeShim      = "shim → daemon → simulator, go-sdk client (full path)"
	ModeSocketRaw = "daemon over its socket, raw JSON-RPC client (no shim)"
	ModeShimRaw   = "shim → daemon → simulator, raw JSON-RPC client (full path)"
)

// ModeResult is the latency of one way of making the health call.
type ModeResult struct {
	Mode string
	Summary
	// CPU per call spent in the daemon and in the shim process (0 when the mode has none),
	// from their /proc CPU times over the measured calls: with the latency, it tells work
	// apart from waiting (wake-ups and scheduling between processes).
	DaemonCPU, ShimCPU time.Duration
	// DaemonAlloc is the bytes the daemon allocated per call, from its gctrace lines over
	// DaemonAllocCalls calls (0 calls: not measured, gctrace off or too few GC cycles), and
	// DaemonGCs the GC cycles it ran over those calls.
	DaemonAlloc      int64
	DaemonAllocCalls int
	DaemonGCs        int
}

// Find returns the result of the named mode.
func Find(results []ModeResult, mode string) (ModeResult, bool) {
	for _, r := range results {
		if r.Mode == mode {
			return r, true
		}
	}
	return ModeResult{}, false
}

// MeasureOverhead makes the same health request perMode times in each of seven ways,
// interleaved in blocks so that drift in machine load hits every mode alike. The first result
// is the baseline.
func MeasureOverhead(ctx context.Context, w *World, perMode int) ([]ModeResult, error) {
	direct := NewDirectHTTP(w.Ext)
	defer direct.Close()
	stub, err := StubSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("stub session: %w", err)
	}
	defer stub.Close()
	inproc, err := InProcSession(ctx, w.Ext.StateDir)
	if err != nil {
		return nil, fmt.Errorf("in-process session: %w", err)
	}
	defer inproc.Close()
	sock, err := w.SocketSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("socket session: %w", err)
	}
	defer sock.Close()
	shimEnv := w.Env(w.Socket, "RESMONGW_NO_AUTOSTART=1")
	shim, err := w.ShimSession(ctx, shimEnv)
	if err != nil {
		return nil, fmt.Errorf("shim session: %w", err)
	}
	defer shim.Close()
	rawSock, err := w.RawSocketSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("raw socket session: %w", err)
	}
	defer rawSock.Close()
	rawShim, err := w.RawShimSession(ctx, shimEnv)
	if err != nil {
		return nil, fmt.Errorf("raw shim session: %w", err)
	}
	defer rawShim.Close()

	health := func(s *Session) func(context.Context) error {
		return func(ctx context.Context) error { _, err := CallHealth(ctx, s.CS); return err }
	}
	raw := func(s *RawSession) func(context.Context) error {
		return func(context.Context) error { _, err := s.Health(); return err }
	}
	daemonPid := w.Daemon.Pid()
	modes := []struct {
		name       string
		call       func(context.Context) error
		daemon, sh int // pids whose CPU time the mode uses, 0 for none
	}{
		{ModeDirect, direct.Call, 0, 0},
		{ModeStub, health(stub), 0, 0},
		{ModeInProc, health(inproc), 0, 0},
		{ModeSocket, health(sock), daemonPid, 0},
		{ModeShim, health(shim), daemonPid, shim.Pid},
		{ModeSocketRaw, raw(rawSock), daemonPid, 0},
		{ModeShimRaw, raw(rawShim), daemonPid, rawShim.Pid},
	}
	cpu := func(pid int) time.Duration {
		if pid == 0 {
			return 0
		}
		d, _ := CPUTime(pid)
		return d
	}
	daemonCPU := make([]time.Duration, len(modes))
	shimCPU := make([]time.Duration, len(modes))
	allocMB := make([]int64, len(modes))
	allocCalls := make([]int, len(modes))
	gcs := make([]int, len(modes))

	const warmup, block = 100, 250
	lat := make([][]time.Duration, len(modes))
	for i, m := range modes {
		for range warmup {
			if err := m.call(ctx); err != nil {
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
		}
		lat[i] = make([]time.Duration, 0, perMode)
	}
	for done := 0; done < perMode; done += block {
		for i, m := range modes {
			d0, s0 := cpu(m.daemon), cpu(m.sh)
			win := newAllocWindow(w.GC.Snapshot())
			for j := range min(block, perMode-done) {
				start := time.Now()
				if err := m.call(ctx); err != nil {
					return nil, fmt.Errorf("%s: %w", m.name, err)
				}
				lat[i] = append(lat[i], time.Since(start))
				if m.daemon != 0 {
					win.after(j, w.GC.Snapshot())
				}
			}
			daemonCPU[i] += cpu(m.daemon) - d0
			shimCPU[i] += cpu(m.sh) - s0
			mb, calls, cycles := win.result()
			allocMB[i] += mb
			allocCalls[i] += calls
			gcs[i] += cycles
		}
	}
	out := make([]ModeResult, len(modes))
	for i, m := range modes {
		n := time.Duration(len(lat[i]))
		out[i] = ModeResult{Mode: m.name, Summary: Summarize(lat[i]), DaemonCPU: daemonCPU[i] / n, ShimCPU: shimCPU[i] / n,
			DaemonAllocCalls: allocCalls[i], DaemonGCs: gcs[i]}
		if allocCalls[i] > 0 {
			out[i].DaemonAlloc = allocMB[i] << 20 / int64(allocCalls[i])
		}
	}
	return out, nil
}

// MeasureColdStart times n launches of `resmongw stdio` (process start to the initialize
// result) against the running daemon.
func MeasureColdStart(ctx context.Context, w *World, n int) (Summary, error) {
	env := w.Env(w.Socket, "RESMONGW_NO_AUTOSTART=1")
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		s, err := w.ShimSession(ctx, env)
		if err != nil {
			return Summary{}, err
		}
		lat = append(lat, time.Since(start))
		s.Close()
	}
	return Summarize(lat), nil
}

// MeasureAutostart times n launches of `resmongw stdio` with no daemon running: each uses a
// fresh socket path, so the shim starts a daemon, waits for it and completes initialize.
// The daemon it started is stopped (by the pid in its lock file) before the next launch.
func MeasureAutostart(ctx context.Context, w *World, n int) (Summary, error) {
	lat := make([]time.Duration, 0, n)
	for i := range n {
		sock := filepath.Join(w.Dir, "auto", strconv.Itoa(i), "mcp.sock")
		start := time.Now()
		s, err := w.ShimSession(ctx, w.Env(sock))
		if err != nil {
			return Summary{}, err
		}
		lat = append(lat, time.Since(start))
		s.Close()
		if err := stopByLock(sock); err != nil {
			return Summary{}, err
		}
	}
	return Summarize(lat), nil
}

// stopByLock stops the daemon that holds socket's lock (paths.LockFile) and waits until it
// is gone.
func stopByLock(socket string) error {
	pid := sessionwire.LockHolder(socket)
	if pid <= 0 {
		return fmt.Errorf("no daemon holds the lock of %s", socket)
	}
	if err := testkit.StopPID(pid, 10*time.Second); err != nil {
		return fmt.Errorf("autostarted daemon: %w", err)
	}
	return nil
}

// SwapResult is how long a session took to reach a restarted backend.
type SwapResult struct {
	NewPort bool
	Summary
	FailedCalls  int    // calls that failed before the first success, over all restarts
	FirstFailure string // what the first of them said
}

// MeasureSwap restarts the simulator n times (temp+rename of its files, the way the app writes
// them) and times, from the moment Restart returns (the files have landed), until a health call
// through the shim first succeeds on the new instance. Calls are made back to back, so the
// time includes the gateway noticing on its own (fsnotify, debounce, probe) or being told by
// a failed call.
func MeasureSwap(ctx context.Context, w *World, n int, newPort bool) (SwapResult, error) {
	r := SwapResult{NewPort: newPort}
	s, err := w.ShimSession(ctx, w.SwapEnv(w.Socket, "RESMONGW_NO_AUTOSTART=1"))
	if err != nil {
		return r, err
	}
	defer s.Close()
	if _, err := CallHealth(ctx, s.CS); err != nil {
		return r, err
	}
	lat := make([]time.Duration, 0, n)
	for range n {
		if err := w.Sim.Restart(resmonsim.RestartOptions{NewPort: newPort}); err != nil {
			return r, err
		}
		landed := time.Now()
		want := w.Sim.RuntimeID()
		for {
			text, err := CallHealth(ctx, s.CS)
			if err == nil && strings.Contains(text, want) {
				lat = append(lat, time.Since(landed))
				break
			}
			r.FailedCalls++
			if r.FirstFailure == "" {
				r.FirstFailure = fmt.Sprintf("%.200v", err)
				if err == nil {
					r.FirstFailure = "answered by the old instance"
				}
			}
			if time.Since(landed) > 10*time.Second {
				return r, fmt.Errorf("no call reached the restarted backend within 10s (last: %v)", err)
			}
			time.Sleep(time.Millisecond)
		}
		w.Sim.ResetRequests()
		time.Sleep(50 * time.Millisecond)
	}
	r.Summary = Summarize(lat)
	return r, nil
}

// ScaleResult is one concurrency level.
type ScaleResult struct {
	Sessions    int
	ViaShim     bool // false: direct socket connections with the preamble
	Duration    time.Duration
	Calls       int
	Errors      int
	CallsPerSec float64
	Latency     Summary
	// Daemon RSS before the sessions opened, with them open and idle, and the most seen
	// while they called.
	RSSBefore, RSSIdle, RSSLoad int64
	// ShimRSS and ShimAnon are the median VmRSS and RssAnon of (up to 20) idle shims; 0
	// without shims. Most of a shim's RSS is the binary's file pages, shared by all shims.
	ShimRSS, ShimAnon int64
	// OpenTime is how long opening all sessions took.
	OpenTime time.Duration
}

// PerSession is the daemon's RSS growth per idle session.
func (r ScaleResult) PerSession() int64 { return (r.RSSIdle - r.RSSBefore) / int64(r.Sessions) }

// MeasureScale opens n sessions, measures the daemon idle, then has every session call health
// back to back for load, and closes them all.
func MeasureScale(ctx context.Context, w *World, n int, viaShim bool, load time.Duration) (ScaleResult, error) {
	r := ScaleResult{Sessions: n, ViaShim: viaShim}
	daemon := w.Daemon.Pid()
	var err error
	if r.RSSBefore, err = RSS(daemon); err != nil {
		return r, err
	}

	sessions := make([]*Session, n)
	defer func() { closeAll(sessions) }()
	env := w.Env(w.Socket, "RESMONGW_NO_AUTOSTART=1")
	open := func(i int) error {
		var err error
		if viaShim {
			sessions[i], err = w.ShimSession(ctx, env)
		} else {
			sessions[i], err = w.SocketSession(ctx)
		}
		return err
	}
	start := time.Now()
	if err := parallel(n, 16, open); err != nil {
		return r, fmt.Errorf("opening %d sessions: %w", n, err)
	}
	r.OpenTime = time.Since(start)

	time.Sleep(500 * time.Millisecond) // let the daemon's session goroutines and buffers settle
	if r.RSSIdle, err = RSS(daemon); err != nil {
		return r, err
	}
	if viaShim {
		var rss, anon []time.Duration // reuse Summarize's median; the unit does not matter
		for _, s := range sessions[:min(n, 20)] {
			if v, a, err := ProcMem(s.Pid); err == nil {
				rss, anon = append(rss, time.Duration(v)), append(anon, time.Duration(a))
			}
		}
		r.ShimRSS, r.ShimAnon = int64(Summarize(rss).P50), int64(Summarize(anon).P50)
	}

	stopSampling := make(chan struct{})
	sampled := make(chan int64)
	go func() {
		var peak int64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if v, err := RSS(daemon); err == nil {
					peak = max(peak, v)
				}
			case <-stopSampling:
				sampled <- peak
				return
			}
		}
	}()

	lat := make([][]time.Duration, n)
	errs := make([]int, n)
	var wg sync.WaitGroup
	begin := time.Now()
	deadline := begin.Add(load)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t := time.Now()
				if _, err := CallHealth(ctx, s.CS); err != nil {
					errs[i]++
					if ctx.Err() != nil {
						return
					}
					continue
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		}()
	}
	wg.Wait()
	r.Duration = time.Since(begin)
	close(stopSampling)
	r.RSSLoad = <-sampled
	var all []time.Duration
	for i := range lat {
		all = append(all, lat[i]...)
		r.Errors += errs[i]
	}
	r.Calls = len(all)
	r.CallsPerSec = float64(r.Calls) / r.Duration.Seconds()
	r.Latency = Summarize(all)
	return r, nil
}

// parallel runs f(0..n-1) with at most width at once and returns the first error (and how
// many more there were).
func parallel(n, width int, f func(i int) error) error {
	sem := make(chan struct{}, width)
	var mu sync.Mutex
	var first error
	more := 0
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				} else {
					more++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if more > 0 {
		return fmt.Errorf("%w (and %d more failures)", first, more)
	}
	return first
}

func closeAll(sessions []*Session) {
	_ = parallel(len(sessions), 32, func(i int) error {
		if sessions[i] != nil {
			sessions[i].Close()
		}
		return nil
	})
}
