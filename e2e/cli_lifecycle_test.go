package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issues 12 A and 13 together: `resmongw restart` and `resmongw stop`, run through the real
// CLI binary, under harness sessions that have reads and writes in flight from several callers.
// A restart must be as invisible as a SIGTERM (every call answered, no error, no write sent
// twice, the same sessions going on on a new daemon); a stop must end every session with every
// pending call answered and one stderr line from each shim, and leave no daemon behind.

// cliSessions is the number of harness sessions, and cliWorkers the callers in each.
const (
	cliSessions = 2
	cliWorkers  = 3
)

// runCLI runs resmongw with args in the world's environment and returns its combined output
// and exit code.
func (w *world) runCLI(ctx context.Context, env []string, args ...string) (string, int) {
	w.T.Helper()
	cmd := w.wrap(exec.CommandContext(ctx, bin, args...))
	cmd.Env = w.Env(env...)
	out := w.output()
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		w.T.Fatalf("%v: %v", args, err)
	}
	return out.String(), 0
}

// openTraffic connects cliSessions harness sessions and starts cliWorkers callers in each,
// returning once every session has had some calls answered.
func (w *world) openTraffic(ctx context.Context, t *testing.T, env []string) ([]*session, []*traffic) {
	var ss []*session
	var trs []*traffic
	for range cliSessions {
		s := w.connect(ctx, env...)
		s.must(ctx, "health", nil)
		ss = append(ss, s)
	}
	for i, s := range ss {
		trs = append(trs, startNamedTraffic(s.cs, cliWorkers, "cli"+strconv.Itoa(i)))
	}
	for _, tr := range trs {
		tr.waitAnswered(t, 15, time.Minute)
	}
	return ss, trs
}

// toolCalls is the number of tool calls the daemon answering status has served, over all
// its targets: a daemon counts only its own.
func (w *world) toolCalls(ctx context.Context, env []string) (pid int, calls uint64, sessions []map[string]any) {
	w.T.Helper()
	var st struct {
		Daemon struct {
			PID int `json:"pid"`
		} `json:"daemon"`
		Targets []struct {
			Tools []struct {
				Calls uint64 `json:"calls"`
			} `json:"tools"`
		} `json:"targets"`
		Sessions []map[string]any `json:"sessions"`
	}
	out := w.runStatus(ctx, env...)
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.T.Fatalf("status: %v\n%s", err, out)
	}
	for _, tg := range st.Targets {
		for _, tl := range tg.Tools {
			calls += tl.Calls
		}
	}
	return st.Daemon.PID, calls, st.Sessions
}

// `resmongw restart` mid-traffic: the CLI asks the daemon to restart and starts the next one
// (the shims may start it first; the lock picks one). Every harness sees no error, nothing is
// left waiting, no write reaches the backend twice, and calls after the restart are answered
// in the same sessions by a daemon with a new pid.
func TestCLIRestartIsInvisibleToOpenSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	cliRestartMidTraffic(t, w)
}

// The same with the per-user service installed: `resmongw start` and `restart` go through the
// service manager (a fake systemctl that runs `resmongw serve` as the unit does), the shims
// reconnecting bring no daemon of their own (any start goes through the service too), and the
// daemon serving the sessions afterwards is the service's.
func TestCLIRestartThroughTheServiceIsInvisibleToOpenSessions(t *testing.T) {
	t.Parallel()
	w := newServiceWorld(t)
	ctx := testkit.Context(t, time.Minute)
	if out, code := w.runCLI(ctx, nil, "start"); code != 0 || !strings.Contains(out, "by the service") {
		t.Fatalf("start: exit %d\n%s", code, out)
	}
	cliRestartMidTraffic(t, w)
	if n := strings.Count(w.systemctlCalls(), "start"); n < 2 {
		t.Errorf("the service was started %d times, want at least 2 (start, then restart):\n%s", n, w.systemctlCalls())
	}
	if args := daemonArgs(t, w.daemonPID()); slices.Contains(args, "--socket") {
		t.Errorf("the daemon after the restart (%q) was spawned directly, not by the service", args)
	}
}

// cliRestartMidTraffic is the restart scenario on w, whose daemon serves.
func cliRestartMidTraffic(t *testing.T, w *world) {
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 5*time.Minute)
	env := simEnv(sim)
	ss, trs := w.openTraffic(ctx, t, env)
	old := w.daemonPID()

	out, code := w.runCLI(ctx, nil, "restart")
	if code != 0 || !strings.Contains(out, "stopped the daemon (pid "+strconv.Itoa(old)) || !strings.Contains(out, "started the daemon (pid ") {
		t.Fatalf("restart: exit %d\n%s", code, out)
	}
	if !testkit.WaitGone(old, 90*time.Second) {
		t.Fatal("the old daemon did not exit")
	}
	now := w.waitNewDaemon(t, old)
	for _, tr := range trs {
		tr.mu.Lock()
		n := tr.answered
		tr.mu.Unlock()
		tr.waitAnswered(t, n+15, time.Minute) // each session goes on, on the new daemon
	}
	for _, tr := range trs {
		tr.finish()
	}

	pid, calls, sessions := w.toolCalls(ctx, env)
	if pid != now || pid == old {
		t.Errorf("status answered by pid %d, want the new daemon %d (old %d)", pid, now, old)
	}
	if calls < 15*cliSessions {
		t.Errorf("the new daemon served %d tool calls, want at least %d (the sessions' calls after the restart)", calls, 15*cliSessions)
	}
	if len(sessions) != cliSessions {
		t.Errorf("sessions on the new daemon: %v, want the %d harness sessions", sessions, cliSessions)
	}
	for _, s := range sessions {
		if s["client_name"] != "e2e" {
			t.Errorf("session on the new daemon %v: want the replayed initialize's client e2e", s)
		}
	}
	var answered, errs, unanswered, writes, replays, received int
	for i, tr := range trs {
		r, got := replayed(sim, tr.writes)
		answered, errs, unanswered, writes, replays, received = answered+tr.answered, errs+len(tr.errors),
			unanswered+tr.unanswered, writes+len(tr.writes), replays+r, received+got
		if len(tr.errors) != 0 {
			t.Errorf("session %d saw %d errors across the restart: %q", i, len(tr.errors), tr.errors)
		}
		if got := ss[i].stderr.String(); got != "" {
			t.Errorf("session %d shim stderr %q, want nothing", i, got)
		}
	}
	t.Logf("restart: %d calls answered, %d errors, %d writes (%d received), %d replayed, %d unanswered; daemon %d -> %d",
		answered, errs, writes, received, replays, unanswered, old, now)
	if unanswered != 0 {
		t.Errorf("%d calls left unanswered", unanswered)
	}
	if replays != 0 {
		t.Errorf("%d writes reached the backend twice", replays)
	}
	if received != writes {
		t.Errorf("%d of %d writes reached the backend (each was answered as done)", received, writes)
	}
}

// `resmongw stop` mid-traffic: the daemon answers what it started, says goodbye with mode
// stop, and each shim answers whatever else was pending, prints one line naming the stop and
// exits 1. No shim brings a daemon back: afterwards none runs.
func TestCLIStopEndsOpenSessionsWithEveryCallAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	cliStopMidTraffic(t, w)
}

// The same with the per-user service installed: stop also tells the service manager, and no
// shim asks it to start the daemon again.
func TestCLIStopThroughTheServiceEndsOpenSessions(t *testing.T) {
	t.Parallel()
	w := newServiceWorld(t)
	ctx := testkit.Context(t, time.Minute)
	if out, code := w.runCLI(ctx, nil, "start"); code != 0 {
		t.Fatalf("start: exit %d\n%s", code, out)
	}
	cliStopMidTraffic(t, w)
	calls := w.systemctlCalls()
	if strings.Count(calls, "start") != 1 || !strings.Contains(calls, "stop") {
		t.Errorf("systemctl calls, want one start (ours) and a stop:\n%s", calls)
	}
}

// cliStopMidTraffic is the stop scenario on w, whose daemon serves.
func cliStopMidTraffic(t *testing.T, w *world) {
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 5*time.Minute)
	env := simEnv(sim)
	ss, trs := w.openTraffic(ctx, t, env)
	old := w.daemonPID()

	out, code := w.runCLI(ctx, nil, "stop")
	if code != 0 || !strings.Contains(out, "stopped the daemon (pid "+strconv.Itoa(old)) {
		t.Fatalf("stop: exit %d\n%s", code, out)
	}
	if !testkit.WaitGone(old, 90*time.Second) {
		t.Fatal("the daemon did not exit")
	}
	// Every worker ends: its session closed under it.
	for _, tr := range trs {
		tr.wg.Wait()
	}
	for i, s := range ss {
		_ = s.cs.Wait() // the shim's exit ends it; its exit code is checked below
		w.closeSession(s.cs, s.cmd)
		code := -1
		if s.cmd.ProcessState != nil {
			code = s.cmd.ProcessState.ExitCode()
		}
		stderr := s.stderr.String()
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "'resmongw stop'") {
			t.Errorf("session %d: shim exit %d, stderr %q; want exit 1 and one line naming the stop", i, code, stderr)
		}
	}
	var answered, unanswered, stopped, closed, writes, replays int
	for i, tr := range trs {
		r, _ := replayed(sim, tr.writes)
		answered, unanswered, writes, replays = answered+tr.answered, unanswered+tr.unanswered, writes+len(tr.writes), replays+r
		for _, e := range tr.errors {
			switch {
			case strings.Contains(e, "was stopped ('resmongw stop'), so this call was not sent"):
				stopped++ // pending in the shim when the goodbye came: answered by it
			case strings.Contains(e, "connection closed") || strings.HasSuffix(e, ": EOF") || strings.Contains(e, "broken pipe"):
				// Sent once the shim had ended the session (it never read them): the harness's
				// own transport says the server is gone.
				closed++
			default:
				t.Errorf("session %d: unexpected error across a stop: %q", i, e)
			}
		}
	}
	t.Logf("stop: %d calls answered (%d by the shim as stopped, %d after the session closed), %d writes, %d replayed, %d unanswered",
		answered, stopped, closed, writes, replays, unanswered)
	if unanswered != 0 {
		t.Errorf("%d calls left unanswered", unanswered)
	}
	if replays != 0 {
		t.Errorf("%d writes reached the backend twice", replays)
	}
	// Every shim has exited; had one started a daemon, it would hold the lock by now.
	if pid := w.daemonPID(); pid > 0 && testkit.Alive(pid) {
		t.Errorf("a daemon (pid %d) came back after the stop", pid)
	}
	if out, code := w.runCLI(ctx, nil, "status"); code != 3 {
		t.Errorf("status after the stop: exit %d, want 3 (not running)\n%s", code, out)
	}
}

// newServiceWorld is a world whose user has the per-user service installed: the default
// socket (its processes see a private /run/user with a logind-style runtime directory in it:
// w.wrap), the unit file, and a fake systemctl first on PATH.
func newServiceWorld(t *testing.T) *world {
	root := testkit.ShortTempDir(t) // first, so it is removed after the world stopped its daemon
	w := newWorld(t)
	fs := testkit.NewFakeService(t, root, w.Home, bin)
	w.Socket, w.serviceEnv, w.fakeService = fs.Socket, fs.Env, fs
	return w
}

// wrap runs cmd as one of the world's processes: in a service world, with the private
// /run/user that holds its default socket.
func (w *world) wrap(cmd *exec.Cmd) *exec.Cmd {
	if w.fakeService != nil {
		w.fakeService.RunUser.Wrap(cmd)
	}
	return cmd
}

// Env is the world's environment; in a service world, the default socket's (no
// RESMONGW_SOCKET) with the service's fakes.
func (w *world) Env(extra ...string) []string {
	if w.serviceEnv == nil {
		return w.World.Env(extra...)
	}
	env := []string{"HOME=" + w.Home, "XDG_STATE_HOME=" + w.StateHome}
	return append(append(env, w.serviceEnv...), extra...)
}

func (w *world) systemctlCalls() string { return w.fakeService.Calls() }

// daemonArgs is pid's argv.
func daemonArgs(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatalf("daemon %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
