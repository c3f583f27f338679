package daemon_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// startRawHarness runs `resmongw stdio` under a byte-level harness in the world.
func (w *world) startRawHarness(extraEnv ...string) *testkit.RawHarness {
	w.T.Helper()
	cmd := exec.Command(bin, "stdio")
	cmd.Env = w.Env(extraEnv...)
	h, err := testkit.StartRawHarness(cmd)
	if err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(func() {
		_ = h.CloseStdin()
		if h.Proc.Stop(testkit.WaitLimit) {
			w.T.Errorf("the shim ignored SIGTERM")
		}
	})
	return h
}

// Status names a session by what the harness called itself in initialize (clientInfo), in
// both forms, alongside the parent process the shim saw.
func TestStatusNamesTheHarnessFromClientInfo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startDaemon()
	sim := startSim(t)
	ctx := testCtx(t)
	s := w.connect(ctx, "2025-06-18", simEnv(sim)...) // clientInfo e2e / 1
	healthRuntimeID(ctx, t, s.cs)
	out, code := w.runStatus(ctx, simEnv(sim), "--json")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	st := decodeStatus(t, out)
	if len(st.Sessions) != 1 || st.Sessions[0].ClientName != "e2e" || st.Sessions[0].ClientVersion != "1" {
		t.Fatalf("sessions %+v, want one named e2e 1", st.Sessions)
	}
	text, _ := w.runStatus(ctx, simEnv(sim))
	if !strings.Contains(text, ": e2e 1, target") {
		t.Fatalf("status does not name the harness:\n%s", text)
	}
}

// Issue 10.7: one session pipelining 1,000 calls at a slow backend keeps the daemon's
// descriptors and its backend connections within the per-session in-flight bound (64), and
// every call is answered, none with an error: the excess waits, nothing fails.
func TestPipelinedCallsStayBounded(t *testing.T) {
	t.Parallel()
	// 1,000 calls: many times the bound, so without it the peaks below would be near 1,000
	// (the issue saw 3,017 descriptors for 3,000), at a third of the race detector's CPU.
	const calls, bound = 1000, 64
	w := newWorld(t)
	// The backend first, so it stops after the daemon (cleanups run last-first): the pool's
	// spare connections that never carried a request would otherwise hold its shutdown for
	// the whole of its bound (net/http counts them as active for five seconds).
	sim := startSim(t)
	d := w.startDaemon()
	h := w.startRawHarness(simEnv(sim)...)
	if err := h.Send(testkit.InitializeRequest(`"init"`, "2025-06-18", "pipeliner")); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitIDs(testkit.WaitLimit, `"init"`); err != nil {
		t.Fatal(err)
	}
	if err := h.Send(testkit.InitializedNotification); err != nil {
		t.Fatal(err)
	}
	if err := h.Send(testkit.ToolCall("0", "health", "")); err != nil { // the backend verified, a connection warm
		t.Fatal(err)
	}
	if err := h.WaitIDs(testkit.WaitLimit, "0"); err != nil {
		t.Fatal(err)
	}
	baseFDs := len(fds(t, d.Pid()))
	sim.SetDelay(5 * time.Millisecond) // calls overlap: without a bound, all at once

	var maxFDs, maxBackend atomic.Int64
	stop := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() { // a measurement, not a synchronisation: the peak seen is a lower bound
		defer sampling.Done()
		for {
			f := fds(t, d.Pid())
			maxFDs.Store(max(maxFDs.Load(), int64(len(f))))
			maxBackend.Store(max(maxBackend.Load(), int64(backendConns(d.Pid(), f, sim.Port()))))
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	go func() {
		for i := 1; i <= calls; i++ {
			if h.Send(testkit.ToolCall(strconv.Itoa(i), "health", "")) != nil {
				return
			}
		}
	}()
	done := h.WaitAnswered(3*time.Minute, func(a map[string]json.RawMessage) bool { return len(a) >= calls+2 })
	close(stop)
	sampling.Wait()
	if !done {
		t.Fatalf("%d of %d calls answered", h.Answered()-2, calls)
	}
	for i := 1; i <= calls; i++ {
		a, _ := h.Answer(strconv.Itoa(i))
		if !strings.Contains(string(a), `"result"`) || strings.Contains(string(a), `"isError":true`) {
			t.Fatalf("call %d: %s", i, a)
		}
	}
	// Two bounds meet here: the session's 64 calls in flight (the daemon stops reading past
	// it; TestLineConnHoldsReadsAtTheInFlightBound shows that one alone) and the backend
	// client's 8 read connections per instance (backend). The limits below are the session's,
	// with room for the idle pool and connections being closed that a sample can catch;
	// with neither bound (main before issue 10.7) a run of 3,000 calls peaked at about 2,500
	// of each.
	if n := maxBackend.Load(); n > 2*bound {
		t.Errorf("%d backend connections open at once, want at most %d", n, 2*bound)
	}
	if n := maxFDs.Load(); n > int64(baseFDs+2*bound+16) {
		t.Errorf("the daemon held %d descriptors (%d before the calls), want at most %d more", n, baseFDs, 2*bound+16)
	}
	t.Logf("peak: %d descriptors (%d before), %d backend connections", maxFDs.Load(), baseFDs, maxBackend.Load())
}

// A session that ends gives back every descriptor it took: its socket, closed once by its
// lineConn when the session ends.
func TestEndedSessionsGiveBackTheirDescriptors(t *testing.T) {
	t.Parallel()
	w, sim, _ := servedWorld(t)
	d := w.DaemonPID()
	session := func() {
		h := w.startRawHarness(simEnv(sim)...)
		if err := h.Send(testkit.InitializeRequest(`"init"`, "2025-06-18", "fds")); err != nil {
			t.Fatal(err)
		}
		if err := h.Send(testkit.InitializedNotification); err != nil {
			t.Fatal(err)
		}
		if err := h.Send(testkit.ToolCall("1", "health", "")); err != nil {
			t.Fatal(err)
		}
		if err := h.WaitIDs(testkit.WaitLimit, `"init"`, "1"); err != nil {
			t.Fatal(err)
		}
		_ = h.CloseStdin()
		select {
		case <-h.Proc.Done():
		case <-time.After(testkit.WaitLimit):
			t.Fatal("the shim did not exit after its stdin closed")
		}
	}
	// The daemon's own descriptors, not counting backend connections (the pool keeps some
	// warm and drops them when idle, on its own schedule).
	own := func() int {
		f := fds(t, d)
		return len(f) - backendConns(d, f, sim.Port())
	}
	session() // the target, its watcher and its client exist from here on
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return sessionsOpen(t, w) == 0 }, "the first session to close")
	base := own()
	for range 5 {
		session()
	}
	testkit.WaitFor(t, testkit.WaitLimit, func() bool { return sessionsOpen(t, w) == 0 }, "the sessions to close")
	// The session list empties before the last close returns: wait for the count to settle.
	if !testkit.Poll(testkit.Context(t, testkit.WaitLimit), func() bool { return own() <= base }) {
		t.Fatalf("the daemon holds %d descriptors after five sessions ended, %d before:\n%v", own(), base, fds(t, d))
	}
}

// fds is the set of a process's open descriptors' targets.
func fds(t *testing.T, pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// backendConns counts the TCP connections among fds whose remote port is port.
func backendConns(pid int, fds []string, port int) int {
	inodes := map[string]bool{}
	for _, f := range fds {
		if strings.HasPrefix(f, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(f, "socket:["), "]")] = true
		}
	}
	want := fmt.Sprintf(":%04X", port)
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/net/" + table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(fl) > 9 && strings.HasSuffix(fl[2], want) && inodes[fl[9]] {
				n++
			}
		}
		f.Close()
	}
	return n
}
