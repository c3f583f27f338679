package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Side is one build of the gateway under measurement: its binary (for the shims) and its
// daemon on a socket of its own. Both sides call the same external simulator.
type Side struct {
	Name   string // "after" (the tree measured) or "before"
	Bin    string
	Socket string
	Daemon *testkit.Proc
}

// Sides is the sides of this world: "after" (w.Bin and w.Daemon), then "before" if started.
// The same pointers every time, so results can be keyed by side.
func (w *World) Sides() []*Side {
	if w.after == nil {
		w.after = &Side{Name: "after", Bin: w.Bin, Socket: w.Socket, Daemon: w.Daemon}
	}
	s := []*Side{w.after}
	if w.Before != nil {
		s = append(s, w.Before)
	}
	return s
}

// StartBefore starts a daemon from bin (a build of an earlier tree) on a socket of its own.
func (w *World) StartBefore(bin string) error {
	socket := filepath.Join(w.Dir, "run-before", "mcp.sock")
	p, err := w.startDaemon(bin, socket, "daemon-before.log", NewGCTrace())
	if err != nil {
		return fmt.Errorf("before daemon: %w", err)
	}
	w.Before = &Side{Name: "before", Bin: bin, Socket: socket, Daemon: p}
	return nil
}

func (w *World) shimEnv(s *Side) []string { return w.Env(s.Socket, "RESMONGW_NO_AUTOSTART=1") }

// Path modes of the comparison, per side.
const (
	PathSocketRaw = "daemon over its socket, raw client"
	PathShimRaw   = "full path (shim → daemon → simulator), raw client"
	PathShimSDK   = "full path, go-sdk client"
)

// PathResult is one way of calling, on one side.
type PathResult struct {
	Side, Mode string
	Summary    // the path's own latency
	// Added is the per-call cost over the baseline: each call's latency minus that of the
	// direct call made in the same round. Its percentiles are of those differences, never
	// differences of percentiles.
	Added Summary
	// DaemonCPU is the daemon's CPU per call over every call it served in the run (all its
	// paths alike); ShimCPU the shim's, for the shim paths.
	DaemonCPU, ShimCPU time.Duration
}

// CompareResult is MeasureCompare's answer.
type CompareResult struct {
	Calls  int
	Direct Summary
	Paths  []PathResult
}

// Find returns the result for side and mode.
func (c *CompareResult) Find(side, mode string) (PathResult, bool) {
	for _, p := range c.Paths {
		if p.Side == side && p.Mode == mode {
			return p, true
		}
	}
	return PathResult{}, false
}

// MeasureCompare makes the health call n times per path, in rounds: each round calls the
// direct baseline and every path of every side once, in an order rotated round by round, so
// each path's call has a baseline call taken moments apart under the same load.
func MeasureCompare(ctx context.Context, w *World, n int) (*CompareResult, error) {
	direct := NewDirectHTTP(w.Ext)
	defer direct.Close()
	type path struct {
		side    *Side
		mode    string
		call    func(context.Context) error
		shimPid int
		lat     []time.Duration
		added   []time.Duration
	}
	var paths []*path
	for _, s := range w.Sides() {
		sock, err := w.rawSocketSession(ctx, s.Socket)
		if err != nil {
			return nil, fmt.Errorf("%s: raw socket session: %w", s.Name, err)
		}
		defer sock.Close()
		raw, err := rawShimSession(ctx, s.Bin, w.shimEnv(s))
		if err != nil {
			return nil, fmt.Errorf("%s: raw shim session: %w", s.Name, err)
		}
		defer raw.Close()
		sdk, err := shimSession(ctx, s.Bin, w.shimEnv(s))
		if err != nil {
			return nil, fmt.Errorf("%s: shim session: %w", s.Name, err)
		}
		defer sdk.Close()
		paths = append(paths,
			&path{side: s, mode: PathSocketRaw, call: func(context.Context) error { _, err := sock.Health(); return err }},
			&path{side: s, mode: PathShimRaw, call: func(context.Context) error { _, err := raw.Health(); return err }, shimPid: raw.Pid},
			&path{side: s, mode: PathShimSDK, call: func(ctx context.Context) error { _, err := CallHealth(ctx, sdk.CS); return err }, shimPid: sdk.Pid},
		)
	}
	const warmup = 100
	for range warmup {
		if err := direct.Call(ctx); err != nil {
			return nil, fmt.Errorf("direct: %w", err)
		}
		for _, p := range paths {
			if err := p.call(ctx); err != nil {
				return nil, fmt.Errorf("%s %s: %w", p.side.Name, p.mode, err)
			}
		}
	}
	cpu := func(pid int) time.Duration { d, _ := SchedCPU(pid); return d }
	daemon0 := map[*Side]time.Duration{}
	for _, s := range w.Sides() {
		daemon0[s] = cpu(s.Daemon.Pid())
	}
	shim0 := make([]time.Duration, len(paths))
	for i, p := range paths {
		if p.shimPid != 0 {
			shim0[i] = cpu(p.shimPid)
		}
	}
	directLat := make([]time.Duration, 0, n)
	for j := range n {
		// Slot 0 is the direct call; the others are the paths; rotate who goes first.
		var dl time.Duration
		lats := make([]time.Duration, len(paths))
		for k := range len(paths) + 1 {
			slot := (j + k) % (len(paths) + 1)
			start := time.Now()
			var err error
			if slot == 0 {
				err = direct.Call(ctx)
				dl = time.Since(start)
			} else {
				err = paths[slot-1].call(ctx)
				lats[slot-1] = time.Since(start)
			}
			if err != nil {
				return nil, fmt.Errorf("round %d slot %d: %w", j, slot, err)
			}
		}
		directLat = append(directLat, dl)
		for i, p := range paths {
			p.lat = append(p.lat, lats[i])
			p.added = append(p.added, lats[i]-dl)
		}
	}
	daemon1 := map[*Side]time.Duration{}
	for _, s := range w.Sides() {
		daemon1[s] = cpu(s.Daemon.Pid())
	}
	out := &CompareResult{Calls: n, Direct: Summarize(directLat)}
	perSide := map[*Side]int{}
	for _, p := range paths {
		perSide[p.side] += n
	}
	for i, p := range paths {
		r := PathResult{Side: p.side.Name, Mode: p.mode, Summary: Summarize(p.lat), Added: Summarize(p.added)}
		r.DaemonCPU = (daemon1[p.side] - daemon0[p.side]) / time.Duration(perSide[p.side])
		if p.shimPid != 0 {
			r.ShimCPU = (cpu(p.shimPid) - shim0[i]) / time.Duration(n)
		}
		out.Paths = append(out.Paths, r)
	}
	return out, nil
}

// SessionsResult is k concurrent sessions through shims, one side.
type SessionsResult struct {
	Side        string
	Sessions    int
	Calls       int
	Errors      int
	Duration    time.Duration
	CallsPerSec float64
	Latency     Summary
	DaemonCPU   time.Duration // per call, under this load
	// Shim is the median memory of the idle shims; DaemonBefore and DaemonIdle the daemon's
	// before they opened and with them all open, warmed and idle.
	Shim                     Mem
	DaemonBefore, DaemonIdle Mem
}

// PerSessionPrivate is the private memory one more session costs: its shim's private memory
// plus the daemon's private growth per session.
func (r SessionsResult) PerSessionPrivate() int64 {
	return r.Shim.Private + (r.DaemonIdle.Private-r.DaemonBefore.Private)/int64(r.Sessions)
}

// MeasureSessions opens k raw-client shim sessions per side and has them all call health back
// to back for load, rounds times per side, alternating sides; results are summed per side.
func MeasureSessions(ctx context.Context, w *World, k int, load time.Duration, rounds int) ([]SessionsResult, error) {
	sides := w.Sides()
	res := make([]SessionsResult, len(sides))
	lat := make([][]time.Duration, len(sides))
	for r := range rounds {
		for o := range sides {
			i := (r + o) % len(sides)
			s := sides[i]
			res[i].Side, res[i].Sessions = s.Name, k
			before, err := ReadMem(s.Daemon.Pid())
			if err != nil {
				return nil, err
			}
			sess, err := openShimSessions(ctx, w, s, k, 20)
			closeAll := func() { closeSessions(sess) }
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("%s: opening %d sessions: %w", s.Name, k, err)
			}
			idle, err := ReadMem(s.Daemon.Pid())
			if err != nil {
				closeAll()
				return nil, err
			}
			var shims []Mem
			for _, x := range sess {
				if m, err := ReadMem(x.Pid); err == nil {
					shims = append(shims, m)
				}
			}
			if r == 0 {
				res[i].DaemonBefore, res[i].DaemonIdle = before, idle
				sort.Slice(shims, func(a, b int) bool { return shims[a].Private < shims[b].Private })
				if len(shims) > 0 {
					res[i].Shim = shims[len(shims)/2]
				}
			}
			cpu0, _ := SchedCPU(s.Daemon.Pid())
			per := make([][]time.Duration, k)
			errs := make([]int, k)
			var wg sync.WaitGroup
			begin := time.Now()
			deadline := begin.Add(load)
			for x := range sess {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(deadline) && ctx.Err() == nil {
						t := time.Now()
						if _, err := sess[x].Health(); err != nil {
							errs[x]++
							return // a raw session cannot go on after a failed read
						}
						per[x] = append(per[x], time.Since(t))
					}
				}()
			}
			wg.Wait()
			res[i].Duration += time.Since(begin)
			cpu1, _ := SchedCPU(s.Daemon.Pid())
			calls := 0
			for x := range per {
				lat[i] = append(lat[i], per[x]...)
				calls += len(per[x])
				res[i].Errors += errs[x]
			}
			res[i].Calls += calls
			if calls > 0 {
				res[i].DaemonCPU += (cpu1 - cpu0) // summed; divided below
			}
			closeAll()
		}
	}
	for i := range res {
		res[i].CallsPerSec = float64(res[i].Calls) / res[i].Duration.Seconds()
		res[i].Latency = Summarize(lat[i])
		if res[i].Calls > 0 {
			res[i].DaemonCPU /= time.Duration(res[i].Calls)
		}
	}
	return res, nil
}

// openShimSessions starts k shim sessions on side s (eight at a time) and makes calls health
// calls on each, so every one is past its first call. The sessions it opened are returned
// even on an error, for closeSessions.
func openShimSessions(ctx context.Context, w *World, s *Side, k, calls int) ([]*RawSession, error) {
	sess := make([]*RawSession, k)
	err := parallel(k, 8, func(i int) error {
		x, err := rawShimSession(ctx, s.Bin, w.shimEnv(s))
		if err != nil {
			return err
		}
		sess[i] = x
		for range calls {
			if _, err := x.Health(); err != nil {
				return err
			}
		}
		return nil
	})
	return sess, err
}

// closeSessions closes every session openShimSessions opened.
func closeSessions(sess []*RawSession) {
	for _, x := range sess {
		if x != nil {
			x.Close()
		}
	}
}
