package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 23 item 5: each figure beside the baseline it is judged against, both measured in the
// same run (never a figure from another run, never a difference of percentiles).

// Targets of issue 23 item 5.
const (
	Target23SpawnRatio   = 3.0                    // spawn → initialize, shim ÷ bare Go program (p50)
	Target23Autostart    = 15 * time.Millisecond  // spawn → initialize with autostart (p50)
	Target23ShimPrivate  = 3 << 19                // 1.5 MiB
	Target23AddedP50     = 200 * time.Microsecond // back to back
	Target23AddedP99     = 600 * time.Microsecond
	Target23AddedSpaced  = 500 * time.Microsecond // calls ≥ 1 s apart, both paths equally cold (p50)
	Target23FloorRatio   = 1.6                    // daemon CPU per call ÷ go-sdk's stdio server's
	Target23Idle1000     = 64 << 20               // daemon RSS with 1,000 idle sessions
	Target23IdleSwitches = 30                     // daemon context switches per 10 s, sessions idle
	idleWakeupWindow     = 10 * time.Second
	directIdleConnLimit  = 4 * time.Second // the daemon's pooled-connection idle timeout (backend.idleConnTimeout)
)

// Helpers are the two baseline programs benchtable builds from this module (bench/cmd/oneline
// and bench/cmd/sdkfloor).
type Helpers struct{ OneLine, SDKFloor string }

// BuildHelpers builds the baseline programs into dir (from the module root, the working
// directory of `go run ./bench/cmd/benchtable`).
func BuildHelpers(ctx context.Context, dir string) (Helpers, error) {
	h := Helpers{OneLine: filepath.Join(dir, "oneline"), SDKFloor: filepath.Join(dir, "sdkfloor")}
	for out, pkg := range map[string]string{h.OneLine: "./bench/cmd/oneline", h.SDKFloor: "./bench/cmd/sdkfloor"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			return h, fmt.Errorf("building %s: %v: %s", pkg, err, b)
		}
	}
	return h, nil
}

// SpawnResult is spawn → initialize answer for the shim (daemon running) and the bare
// program, launched alternately.
type SpawnResult struct {
	Shim, Bare Summary
	// Ratio is the median of the per-round ratios (shim ÷ the bare launch of the same round).
	Ratio float64
}

// spawnInit starts prog with args and env, writes an initialize request on its stdin and
// times until the first answer line is read; then it closes stdin and waits for the exit
// (untimed).
func spawnInit(ctx context.Context, prog string, args, env []string) (time.Duration, error) {
	// Pipes of our own: exec's StdoutPipe is closed by Wait, which a program that answers and
	// exits at once (the bare one) can reach before the answer is read.
	inR, inW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		return 0, err
	}
	defer outR.Close()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env, cmd.Stdin, cmd.Stdout = env, inR, outW
	req := testkit.InitializeRequest("0", Protocol, "resmongw-bench-spawn") + "\n"
	start := time.Now()
	p, err := testkit.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		return 0, err
	}
	defer func() {
		_ = inW.Close()
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			p.Stop(time.Second)
		}
	}()
	if _, err := io.WriteString(inW, req); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(outR).ReadSlice('\n')
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s: no answer line: %w", filepath.Base(prog), err)
	}
	if !strings.Contains(string(line), `"result"`) {
		return 0, fmt.Errorf("%s: answered %.200q", filepath.Base(prog), line)
	}
	return d, nil
}

// MeasureSpawn launches the shim (daemon running, no autostart) and the bare program n times
// each, alternating which goes first each round.
func MeasureSpawn(ctx context.Context, w *World, h Helpers, n int) (SpawnResult, error) {
	var shim, bare, ratios []time.Duration
	env := w.shimEnv(w.Sides()[0])
	for i := range n {
		var s, b time.Duration
		var err error
		for k := range 2 {
			if (i+k)%2 == 0 {
				s, err = spawnInit(ctx, w.Bin, []string{"stdio"}, env)
			} else {
				b, err = spawnInit(ctx, h.OneLine, nil, env)
			}
			if err != nil {
				return SpawnResult{}, err
			}
		}
		shim, bare = append(shim, s), append(bare, b)
		ratios = append(ratios, time.Duration(float64(s)/float64(b)*1000))
	}
	return SpawnResult{Shim: Summarize(shim), Bare: Summarize(bare), Ratio: float64(Summarize(ratios).P50) / 1000}, nil
}

// MeasureAutostartRaw times spawn → initialize answer with no daemon running (each launch on
// a fresh socket, so the shim starts a daemon), then stops that daemon.
func MeasureAutostartRaw(ctx context.Context, w *World, n int) (Summary, error) {
	lat := make([]time.Duration, 0, n)
	for i := range n {
		sock := filepath.Join(w.Dir, "auto23", strconv.Itoa(i), "mcp.sock")
		d, err := spawnInit(ctx, w.Bin, []string{"stdio"}, w.Env(sock))
		if err != nil {
			return Summary{}, err
		}
		lat = append(lat, d)
		if err := stopByLock(sock); err != nil {
			return Summary{}, err
		}
	}
	return Summarize(lat), nil
}

// ColdPairResult is the spaced measurement of one side: each call, on the direct path and on
// the full path, follows gap of silence on both, so both start equally cold; Added is per
// round (the side's call minus the direct call of the same round).
type ColdPairResult struct {
	Gap           time.Duration
	Side          string
	Direct, Full  Summary
	Added         Summary
	DirectReconns int // direct calls that had to open a connection (their idle one was gone)
}

// MeasureColdPairs makes n rounds per gap: a call on the direct path and one on the full
// path of every side (raw client), each after gap of silence on all of them, the order
// rotated round by round. The direct client drops an idle connection after the daemon's own
// idle timeout, so for any gap both paths hold, or have lost, their backend connection alike.
// It replaces a method that paired each gateway call with a direct call made right after it
// on a warm connection (a warm path against a cold one).
func MeasureColdPairs(ctx context.Context, w *World, gaps []time.Duration, n int) ([]ColdPairResult, error) {
	sides := w.Sides()
	sess := make([]*RawSession, len(sides))
	for i, s := range sides {
		x, err := rawShimSession(ctx, s.Bin, w.shimEnv(s))
		if err != nil {
			return nil, fmt.Errorf("%s: raw shim session: %w", s.Name, err)
		}
		defer x.Close()
		sess[i] = x
	}
	direct := NewDirectHTTP(w.Ext)
	defer direct.Close()
	direct.client.Transport.(*http.Transport).IdleConnTimeout = directIdleConnLimit
	for range 5 {
		for _, x := range sess {
			if _, err := x.Health(); err != nil {
				return nil, err
			}
		}
		if err := direct.Call(ctx); err != nil {
			return nil, err
		}
	}
	var out []ColdPairResult
	for _, gap := range gaps {
		var dl []time.Duration
		fl := make([][]time.Duration, len(sides))
		added := make([][]time.Duration, len(sides))
		reconns := 0
		for i := range n {
			f := make([]time.Duration, len(sides))
			var d time.Duration
			for k := range len(sides) + 1 {
				j := (i + k) % (len(sides) + 1)
				var before map[string]bool
				if j == len(sides) {
					// Read before the silence, so the call starts as cold as the other path's.
					before, _ = BackendConns(os.Getpid(), w.Ext.Port)
				}
				select {
				case <-time.After(gap):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				start := time.Now()
				var err error
				if j == len(sides) {
					err = direct.Call(ctx)
					d = time.Since(start)
					if after, _ := BackendConns(os.Getpid(), w.Ext.Port); newIn(before, after) > 0 {
						reconns++
					}
				} else {
					_, err = sess[j].Health()
					f[j] = time.Since(start)
				}
				if err != nil {
					return nil, err
				}
			}
			dl = append(dl, d)
			for j := range sides {
				fl[j], added[j] = append(fl[j], f[j]), append(added[j], f[j]-d)
			}
		}
		for j, s := range sides {
			out = append(out, ColdPairResult{Gap: gap, Side: s.Name, Direct: Summarize(dl), Full: Summarize(fl[j]), Added: Summarize(added[j]), DirectReconns: reconns})
		}
	}
	return out, nil
}

// FloorResult compares the daemon's CPU per call with go-sdk's own stdio server answering a
// text of the same size from a raw handler, the two called alternately in the same run.
type FloorResult struct {
	Calls                   int
	TextBytes               int
	DaemonCPU, FloorCPU     time.Duration // per call
	DaemonRTT, FloorRTT     Summary       // the round trip of each (daemon: over its socket, raw client)
	Ratio                   float64
	DaemonSwitches, FloorSw float64 // context switches per call
}

// MeasureFloor runs the SDK floor server (GOMAXPROCS=1, as the daemon runs) and calls it and
// the daemon (over its socket, raw client) n times each, alternately.
func MeasureFloor(ctx context.Context, w *World, h Helpers, n int) (FloorResult, error) {
	var r FloorResult
	sock, err := w.rawSocketSession(ctx, w.Socket)
	if err != nil {
		return r, err
	}
	defer sock.Close()
	text, err := sock.Health()
	if err != nil {
		return r, err
	}
	r.TextBytes, r.Calls = len(text), n
	cmd := exec.Command(h.SDKFloor, "-bytes", strconv.Itoa(len(text)))
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	p, err := testkit.Start(cmd)
	if err != nil {
		return r, err
	}
	defer p.Stop(5 * time.Second)
	floor, err := newRawSession(ctx, stdin, stdout, func() { _ = stdin.Close() })
	if err != nil {
		return r, err
	}
	defer floor.Close()
	for range 100 {
		if _, err := floor.Health(); err != nil {
			return r, err
		}
		if _, err := sock.Health(); err != nil {
			return r, err
		}
	}
	dpid, fpid := w.Daemon.Pid(), p.Pid()
	d0, err := SchedCPU(dpid)
	if err != nil {
		return r, err
	}
	f0, _ := SchedCPU(fpid)
	ds0, _ := ContextSwitches(dpid)
	fs0, _ := ContextSwitches(fpid)
	var dl, fl []time.Duration
	for i := range n {
		for k := range 2 {
			start := time.Now()
			if (i+k)%2 == 0 {
				_, err = floor.Health()
				fl = append(fl, time.Since(start))
			} else {
				_, err = sock.Health()
				dl = append(dl, time.Since(start))
			}
			if err != nil {
				return r, err
			}
		}
	}
	d1, _ := SchedCPU(dpid)
	f1, _ := SchedCPU(fpid)
	ds1, _ := ContextSwitches(dpid)
	fs1, _ := ContextSwitches(fpid)
	r.DaemonCPU, r.FloorCPU = (d1-d0)/time.Duration(n), (f1-f0)/time.Duration(n)
	r.DaemonRTT, r.FloorRTT = Summarize(dl), Summarize(fl)
	r.DaemonSwitches, r.FloorSw = float64(ds1-ds0)/float64(n), float64(fs1-fs0)/float64(n)
	if r.FloorCPU > 0 {
		r.Ratio = float64(r.DaemonCPU) / float64(r.FloorCPU)
	}
	return r, nil
}

// ContextSwitches is the sum of voluntary and involuntary context switches over a process's
// threads (/proc/<pid>/task/*/status).
func ContextSwitches(pid int) (int64, error) {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	if err != nil || len(tasks) == 0 {
		return 0, errors.New("no task status")
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum, nil
}

// IdleResult is the idle wake-ups: context switches over idleWakeupWindow with sessions open
// and no call in flight.
type IdleResult struct {
	Sessions       int
	Daemon         int64 // over all its threads
	ShimMax        int64 // the busiest shim's
	Window         time.Duration
	DaemonThreads  int
	ShimMedianPriv int64
}

// MeasureIdle opens k raw shim sessions (each makes a few calls), waits a second for the last
// answers' aftermath, then counts the daemon's and the shims' context switches over the window.
func MeasureIdle(ctx context.Context, w *World, k int) (IdleResult, error) {
	r := IdleResult{Sessions: k, Window: idleWakeupWindow}
	s := w.Sides()[0]
	sess, err := openShimSessions(ctx, w, s, k, 5)
	defer closeSessions(sess)
	if err != nil {
		return r, err
	}
	time.Sleep(time.Second)
	pid := w.Daemon.Pid()
	d0, err := ContextSwitches(pid)
	if err != nil {
		return r, err
	}
	shim0 := make([]int64, k)
	for i, x := range sess {
		shim0[i], _ = ContextSwitches(x.Pid)
	}
	select {
	case <-time.After(r.Window):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	d1, _ := ContextSwitches(pid)
	r.Daemon = d1 - d0
	for i, x := range sess {
		n, _ := ContextSwitches(x.Pid)
		r.ShimMax = max(r.ShimMax, n-shim0[i])
	}
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*")
	r.DaemonThreads = len(tasks)
	return r, nil
}

// Issue23 is issue 23 item 5's figures that no other section measures; the report takes the
// back-to-back, spaced and 8-session figures from those sections (Compare, Spaced, Sessions).
type Issue23 struct {
	Spawn     SpawnResult
	Autostart Summary
	Floor     FloorResult
	Idle      IdleResult
	Idle1000  *ScaleResult
}
