package daemon_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/statusdoc"
)

// B2: a session whose RESMON_PORT the port parser refuses ("+N", "000N") never shares a
// target with one naming the valid port N, whichever connects first: the bad one is told its
// value is not a port, the good one reaches the backend.
func TestBadAndGoodPortNeverShareATarget(t *testing.T) {
	t.Parallel()
	for _, badFirst := range []bool{true, false} {
		t.Run("badFirst="+strconv.FormatBool(badFirst), func(t *testing.T) {
			w, sim, ctx := servedWorld(t)
			good := strconv.Itoa(sim.Port())
			for _, bad := range []string{"+" + good, "000" + good} {
				env := func(port string) []string { return append(simEnv(sim), "RESMON_PORT="+port) }
				checkBad := func() {
					s := w.connect(ctx, "2025-11-25", env(bad)...)
					r := call(ctx, t, s.cs, "health", nil)
					msg, _ := r.payload["message"].(string)
					if !r.isError || !strings.Contains(msg, "not a port") {
						t.Errorf("RESMON_PORT=%q: health = %v, want the not-a-port error", bad, r.payload)
					}
				}
				checkGood := func() {
					s := w.connect(ctx, "2025-11-25", env(good)...)
					if got := healthRuntimeID(ctx, t, s.cs); got != sim.RuntimeID() {
						t.Errorf("RESMON_PORT=%s reached %s, want %s", good, got, sim.RuntimeID())
					}
				}
				if badFirst {
					checkBad()
					checkGood()
				} else {
					checkGood()
					checkBad()
				}
			}
		})
	}
}

// Two harnesses pointing at two resmon instances each reach their own backend through one
// daemon.
func TestTwoTargets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	simA, simB := startSim(t), startSim(t)
	ctx := testCtx(t)
	a := w.connect(ctx, "2025-11-25", simEnv(simA)...)
	b := w.connect(ctx, "2025-11-25", simEnv(simB)...)
	for i := 0; i < 3; i++ {
		if got := healthRuntimeID(ctx, t, a.cs); got != simA.RuntimeID() {
			t.Fatalf("session A reached %s, want %s (B is %s)", got, simA.RuntimeID(), simB.RuntimeID())
		}
		if got := healthRuntimeID(ctx, t, b.cs); got != simB.RuntimeID() {
			t.Fatalf("session B reached %s, want %s (A is %s)", got, simB.RuntimeID(), simA.RuntimeID())
		}
	}
	out, code := w.runStatus(ctx, simEnv(simA), "--json")
	if code != 0 {
		t.Fatalf("status exit %d with both backends up:\n%s", code, out)
	}
	st := decodeStatus(t, out)
	if len(st.Targets) != 2 || len(st.Sessions) != 2 {
		t.Fatalf("status: %d targets, %d sessions; want 2 and 2", len(st.Targets), len(st.Sessions))
	}
	var rids []string
	for _, tg := range st.Targets {
		if tg.Sessions != 1 || tg.State.Backend == nil {
			t.Fatalf("target %s: %d sessions, backend %v", tg.Key, tg.Sessions, tg.State.Backend)
		}
		rids = append(rids, tg.State.Backend.RuntimeID())
	}
	if !slices.Contains(rids, simA.RuntimeID()) || !slices.Contains(rids, simB.RuntimeID()) {
		t.Fatalf("status runtime ids %v, want both %s and %s", rids, simA.RuntimeID(), simB.RuntimeID())
	}
	if !st.Targets[0].Caller || st.Targets[0].State.Backend.RuntimeID() != simA.RuntimeID() {
		t.Fatalf("the caller's target should come first and be A's")
	}
}

// inotifyInstancesOf counts pid's inotify instances from its /proc/<pid>/fd links.
func inotifyInstancesOf(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot count the daemon's inotify instances: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// Issue 26.2, as it was found: many distinct harness environments against one daemon. The
// daemon keeps one inotify instance whatever their number; it keeps at most --max-targets of
// them, closing idle ones (no session) to make room; with every one in use the next session
// is refused, and its shim says why. Sessions are raw socket sessions (no shim process each)
// but for the refused one, whose shim's message is what a person sees.
func TestManyTargetsShareOneInotifyInstanceAndAreCapped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon("--max-targets", "3", "--target-idle", "1h")
	root := t.TempDir()
	dirOf := func(i int) string { return filepath.Join(root, "resmon-"+strconv.Itoa(i)) }
	open := func(i int) *rawSession { return w.rawSession(map[string]string{"RESMON_STATE_DIR": dirOf(i)}) }
	// status is asked from an environment that has a session throughout, so it never takes
	// a target of its own.
	statusNow := func() statusdoc.Status {
		t.Helper()
		pre := sessionwire.Line(sessionwire.Preamble{Resmongw: sessionwire.Protocol, Kind: sessionwire.KindStatus,
			Env: map[string]string{"HOME": w.Home, "RESMON_STATE_DIR": dirOf(1)}})
		c, _, line, err := testkit.DialPreamble(w.Socket, pre, 60*time.Second)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		c.Close()
		return decodeStatus(t, string(line))
	}
	// closeSession ends s, one of three sessions, and waits until the daemon has let its
	// target go idle. The daemon answers the preamble before it counts the session, so the
	// wait for three comes first.
	closeSession := func(s *rawSession) {
		t.Helper()
		testkit.WaitFor(t, 30*time.Second, func() bool { return len(statusNow().Sessions) == 3 }, "the session's start")
		s.c.Close()
		testkit.WaitFor(t, 30*time.Second, func() bool { return len(statusNow().Sessions) == 2 }, "the session's end")
	}

	sessions := []*rawSession{open(1), open(2), open(3)}
	if n := inotifyInstancesOf(t, d.Pid()); n != 1 {
		t.Fatalf("the daemon holds %d inotify instances for 3 targets, want 1", n)
	}

	// A fourth environment while all three have a session: refused, with the reason.
	cmd := exec.CommandContext(testCtx(t), bin, "stdio")
	cmd.Env = w.Env("RESMON_STATE_DIR=" + dirOf(4))
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(stderr.String(), "already serves 3 resmon instances") || !strings.Contains(stderr.String(), "--max-targets") {
		t.Fatalf("a fourth target past the cap: %v, stderr %q; want exit 1 naming the limit", err, stderr.String())
	}

	// status from that environment says the same, and fails.
	if out, code := w.runStatus(testCtx(t), []string{"RESMON_STATE_DIR=" + dirOf(4)}); code == 0 ||
		!strings.Contains(out, "this shell's environment: no target: this daemon already serves 3 resmon instances") {
		t.Errorf("status from a fourth environment: exit %d\n%s", code, out)
	}

	// One session ends: its target is idle and makes room for the next environment, and so on
	// for many more; the daemon never holds more than the cap, nor another inotify instance.
	closeSession(sessions[1])
	const last = 40
	for i := 4; i <= last; i++ {
		closeSession(open(i))
	}
	live := map[string]bool{}
	for _, tg := range statusNow().Targets {
		live[filepath.Base(tg.Env.StateDir)] = true
	}
	if len(live) != 3 || !live["resmon-1"] || !live["resmon-3"] || !live["resmon-"+strconv.Itoa(last)] {
		t.Errorf("live targets %v: want the two with sessions (1, 3) and the last idle one (%d)", live, last)
	}
	if n := inotifyInstancesOf(t, d.Pid()); n != 1 {
		t.Fatalf("the daemon holds %d inotify instances after %d environments, want 1", n, last)
	}
}
