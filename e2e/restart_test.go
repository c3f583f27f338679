package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 12 A: a daemon restart under an open harness session. Each test drives one go-sdk
// client session (a harness) through the real shim with reads and writes in flight from
// several goroutines, stops the daemon mid-traffic, and counts: calls answered, errors the
// harness saw, writes the backend received twice, calls left unanswered.

// traffic is the harness's side: workers calling health (a read) and create_routine (a
// write with a name of its own, so the backend's request log shows any replay).
type traffic struct {
	cs   *mcp.ClientSession
	stop chan struct{}
	wg   sync.WaitGroup

	mu         sync.Mutex
	answered   int
	errors     []string // every error the harness saw, as it saw it
	unanswered int      // calls whose context ran out: the harness left waiting
	writes     []string // names of the routines the harness asked for (and the gateway did not withdraw)
	// withdrawn counts writes whose confirmation was open when the daemon went away: the
	// gateway answers those "nothing was sent" (README, "Confirming writes"), the one thing a
	// restart shows a harness whose person is being asked.
	withdrawn int
	changed   chan struct{}
	prefix    string // starts every routine name, unique per session sharing a backend
}

func startTraffic(cs *mcp.ClientSession, workers int) *traffic {
	return startNamedTraffic(cs, workers, "restart")
}

// startNamedTraffic is startTraffic for one of several sessions on one backend: prefix keeps
// their routine names apart, so a name the backend saw twice is a replay.
func startNamedTraffic(cs *mcp.ClientSession, workers int, prefix string) *traffic {
	tr := &traffic{cs: cs, stop: make(chan struct{}), changed: make(chan struct{}), prefix: prefix}
	for w := range workers {
		tr.wg.Add(1)
		go tr.work(w)
	}
	return tr
}

func (tr *traffic) work(w int) {
	defer tr.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-tr.stop:
			return
		default:
		}
		name, args := "health", map[string]any(nil)
		if i%3 == 2 {
			routine := fmt.Sprintf("%s-%d-%d", tr.prefix, w, i)
			name, args = "create_routine", map[string]any{"name": routine, "keywords": []any{"graph"},
				"sources": []any{"arxiv"}, "schedule": "0 8 * * *"}
			tr.mu.Lock()
			tr.writes = append(tr.writes, routine)
			tr.mu.Unlock()
		}
		// A bound per call well above any drain or reconnect: running out means left waiting.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := tr.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		timedOut := ctx.Err() != nil
		cancel()
		tr.mu.Lock()
		switch {
		case timedOut:
			tr.unanswered++
		case err != nil:
			tr.answered++
			tr.errors = append(tr.errors, name+": "+err.Error())
		case res.IsError:
			tr.answered++
			text := ""
			if len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			if routine, ok := args["name"].(string); ok && withdrawnWrite(text) {
				tr.withdrawn++
				tr.writes = slices.DeleteFunc(tr.writes, func(n string) bool { return n == routine })
				break
			}
			tr.errors = append(tr.errors, name+": "+text)
		default:
			tr.answered++
		}
		close(tr.changed)
		tr.changed = make(chan struct{})
		tr.mu.Unlock()
		if err != nil && strings.Contains(err.Error(), "connection closed") {
			return // the session itself is gone; the counts say so
		}
	}
}

// withdrawnWrite reports whether a tool error says the write's confirmation was withdrawn
// because the session was stopping: nothing was sent.
func withdrawnWrite(text string) bool {
	var e struct {
		Error   string         `json:"error"`
		Message string         `json:"message"`
		Detail  map[string]any `json:"detail"`
	}
	return json.Unmarshal([]byte(text), &e) == nil && e.Error == backend.CodeConflict && e.Detail["reason"] == mcpserver.ReasonNotConfirmed &&
		e.Detail["sent"] == false && strings.Contains(e.Message, "while the confirmation was open")
}

// waitAnswered waits (bounded) until at least n calls have been answered in all.
func (tr *traffic) waitAnswered(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		tr.mu.Lock()
		got, ch := tr.answered, tr.changed
		tr.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("only %d calls answered within %v (want %d)", got, limit, n)
		}
	}
}

func (tr *traffic) finish() {
	close(tr.stop)
	tr.wg.Wait()
}

// replayed counts the routines the backend was asked to create more than once.
func replayed(sim *resmonsim.Sim, names []string) (replays, received int) {
	seen := map[string]int{}
	for _, r := range sim.Requests() {
		// A 401 is the token guard's refusal before anything ran (a write is then sent once
		// to the restarted backend): not a receipt.
		if r.Method != "POST" || r.Path != "/api/routines" || r.Status == 401 {
			continue
		}
		var body struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r.Body, &body) == nil {
			seen[body.Name]++
		}
	}
	for _, n := range names {
		if seen[n] > 1 {
			replays += seen[n] - 1
		}
		if seen[n] > 0 {
			received++
		}
	}
	return replays, received
}

// connectWith is world.connect with the shim at exe (a copy of resmongw under test).
func (w *world) connectWith(ctx context.Context, exe string, extraEnv ...string) *session {
	w.T.Helper()
	s, err := w.tryConnect(ctx, exe, extraEnv...)
	if err != nil {
		w.T.Fatalf("connect: %v\nshim stderr: %s", err, s.stderr)
	}
	return s
}

// waitNewDaemon waits (bounded) for a daemon other than old to hold the lock and returns it.
func (w *world) waitNewDaemon(t *testing.T, old int) int {
	t.Helper()
	var pid int
	testkit.WaitFor(t, 60*time.Second, func() bool {
		pid = w.daemonPID()
		return pid > 0 && pid != old && testkit.Alive(pid)
	}, "a new daemon")
	return pid
}

// statusOf is the daemon's status, decoded loosely.
func (w *world) statusOf(ctx context.Context, env ...string) (version string, sessions []map[string]any) {
	w.T.Helper()
	var st struct {
		Daemon struct {
			Version string `json:"version"`
		} `json:"daemon"`
		Sessions []map[string]any `json:"sessions"`
	}
	out := w.runStatus(ctx, env...)
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.T.Fatalf("status: %v\n%s", err, out)
	}
	return st.Daemon.Version, st.Sessions
}

// restartMidTraffic runs the scenario: traffic, then kill(daemon pid) once some calls are
// answered, then more calls on the new daemon, which the shim started itself (no service in
// this world), exactly as at the start.
func restartMidTraffic(t *testing.T, sig syscall.Signal) (tr *traffic, sim *resmonsim.Sim) {
	w := newWorld(t)
	first := w.startDaemon()
	sim = w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 4*time.Minute)
	s := w.connect(ctx, simEnv(sim)...)
	s.must(ctx, "health", nil)
	old := w.daemonPID()

	tr = startTraffic(s.cs, 4)
	tr.waitAnswered(t, 30, time.Minute)
	if err := syscall.Kill(first.Pid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done():
	case <-time.After(90 * time.Second):
		t.Fatal("the old daemon did not exit")
	}
	w.waitNewDaemon(t, old)
	tr.mu.Lock()
	n := tr.answered
	tr.mu.Unlock()
	tr.waitAnswered(t, n+30, time.Minute) // the same session goes on, on the new daemon
	tr.finish()

	// The same harness session, rebuilt on the new daemon: status names it from the
	// replayed initialize.
	if _, sessions := w.statusOf(ctx, simEnv(sim)...); len(sessions) != 1 || sessions[0]["client_name"] != "e2e" {
		t.Errorf("sessions on the new daemon: %v, want the one harness session (e2e)", sessions)
	}
	if got := s.stderr.String(); got != "" {
		t.Errorf("shim stderr %q, want nothing", got)
	}
	return tr, sim
}

// SIGTERM (a service restart, `resmongw restart`): the old daemon answers every call in
// flight, says goodbye, and the shim takes the session to a new daemon. The harness sees no
// error at all, no write is sent twice, nothing is left waiting.
func TestDaemonRestartIsInvisibleToTheHarness(t *testing.T) {
	t.Parallel()
	tr, sim := restartMidTraffic(t, syscall.SIGTERM)
	replays, received := replayed(sim, tr.writes)
	t.Logf("SIGTERM: %d calls answered, %d errors, %d writes (%d received), %d replayed, %d unanswered",
		tr.answered, len(tr.errors), len(tr.writes), received, replays, tr.unanswered)
	if len(tr.errors) != 0 {
		t.Errorf("the harness saw %d errors across a graceful restart: %q", len(tr.errors), tr.errors)
	}
	if tr.unanswered != 0 {
		t.Errorf("%d calls left unanswered", tr.unanswered)
	}
	if replays != 0 {
		t.Errorf("%d writes reached the backend twice", replays)
	}
	if received != len(tr.writes) {
		t.Errorf("%d of %d writes reached the backend (each was answered as done)", received, len(tr.writes))
	}
}

// SIGKILL: the daemon dies with calls in flight. Every one is answered (a write in flight as
// outcome unknown, never sent again; a read is retried once on the new daemon), then the
// session goes on on a new daemon the shim started.
func TestDaemonCrashAnswersEveryCallAndReconnects(t *testing.T) {
	t.Parallel()
	tr, sim := restartMidTraffic(t, syscall.SIGKILL)
	replays, received := replayed(sim, tr.writes)
	t.Logf("SIGKILL: %d calls answered, %d errors, %d writes (%d received), %d replayed, %d unanswered",
		tr.answered, len(tr.errors), len(tr.writes), received, replays, tr.unanswered)
	if tr.unanswered != 0 {
		t.Errorf("%d calls left unanswered", tr.unanswered)
	}
	if replays != 0 {
		t.Errorf("%d writes reached the backend twice", replays)
	}
	// At most one call per worker was in flight at the kill; only writes may fail, and only
	// as "outcome unknown, not sent again".
	if len(tr.errors) > 4 {
		t.Errorf("%d errors for 4 workers: %q", len(tr.errors), tr.errors)
	}
	for _, e := range tr.errors {
		if !strings.HasPrefix(e, "create_routine: ") || !strings.Contains(e, "whether it took effect is unknown") || !strings.Contains(e, `"internal_error"`) {
			t.Errorf("error after a crash: %q, want a write's outcome-unknown answer", e)
		}
	}
}

// The upgrade path: the binary the shim and daemon run from is replaced on disk by a build of
// another version, and the daemon restarted (as a package upgrade does). The session goes on,
// and status shows the new version serving it.
func TestUpgradeReplacesTheDaemonUnderAnOpenSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := testkit.ShortTempDir(t)
	exe := filepath.Join(dir, "resmongw")
	copyFile(t, bin, exe)
	const newVersion = "9.9.9-upgrade"
	next := filepath.Join(dir, "resmongw.next")
	build := exec.Command("go", "build", "-o", next, "-ldflags", "-X github.com/resmongw/resmongw/version.Version="+newVersion,
		"github.com/resmongw/resmongw/cmd/resmongw")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the new version: %v\n%s", err, out)
	}
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 4*time.Minute)
	s := w.connectWith(ctx, exe, simEnv(sim)...) // autostarts the daemon from exe
	s.must(ctx, "health", nil)
	oldVersion, _ := w.statusOf(ctx, simEnv(sim)...)
	old := w.daemonPID()
	tr := startTraffic(s.cs, 2)
	tr.waitAnswered(t, 10, time.Minute)

	if err := os.Rename(next, exe); err != nil { // the package manager's atomic replace
		t.Fatal(err)
	}
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil { // the service restarted
		t.Fatal(err)
	}
	w.waitNewDaemon(t, old)
	tr.mu.Lock()
	n := tr.answered
	tr.mu.Unlock()
	tr.waitAnswered(t, n+10, time.Minute)
	tr.finish()
	version, sessions := w.statusOf(ctx, simEnv(sim)...)
	if oldVersion == newVersion || version != newVersion {
		t.Errorf("daemon version %q after the upgrade (was %q), want %q", version, oldVersion, newVersion)
	}
	if len(sessions) != 1 || sessions[0]["client_name"] != "e2e" {
		t.Errorf("sessions after the upgrade: %v", sessions)
	}
	if len(tr.errors) != 0 || tr.unanswered != 0 {
		t.Errorf("across the upgrade: %d errors %q, %d unanswered", len(tr.errors), tr.errors, tr.unanswered)
	}
	if got := s.stderr.String(); got != "" {
		t.Errorf("shim stderr %q, want nothing", got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
