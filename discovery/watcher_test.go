package discovery

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/procexit"
	"github.com/resmongw/resmongw/internal/testkit"
)

// waitTimeout bounds every wait in these tests; it is a hang guard, not a speed assertion.
const waitTimeout = 10 * time.Second

// startWatcher starts a watcher that only re-checks on events and Recheck (the safety
// poll is pushed out of the way unless poll is set).
func startWatcher(t *testing.T, tg Target, poll time.Duration, defPort int) *Watcher {
	t.Helper()
	w, _ := startSubscribed(t, tg, poll, defPort)
	return w
}

// startSubscribed is startWatcher with a subscription taken before Start, so that the
// first event cannot be missed.
func startSubscribed(t *testing.T, tg Target, poll time.Duration, defPort int) (*Watcher, <-chan Event) {
	t.Helper()
	if poll == 0 {
		poll = time.Hour
	}
	var mu sync.Mutex
	var logs []string
	w := NewWatcher(tg, &WatchOptions{Poll: poll, Probe: testOpts(defPort), Logger: func(msg string, kv ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, msg)
	}})
	events, _ := w.Subscribe() // closed by Close
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w, events
}

// nextEvent receives one event, bounded.
func nextEvent(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event channel closed")
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatal("no event")
	}
	return Event{}
}

// waitFor waits, generation by generation, until pred holds for the current state.
func waitFor(t *testing.T, w *Watcher, what string, pred func(State) bool) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s := w.Current()
	for !(s.Generation > 0 && pred(s)) {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s; state: gen %d backend %+v unavailable %+v", what, s.Generation, s.Backend, s.Unavailable)
		}
		s = w.Wait(ctx, s.Generation)
	}
	return s
}

func isUpOn(port int, token string) func(State) bool {
	return func(s State) bool {
		return s.Backend != nil && s.Backend.Port == port && s.Backend.Token.Reveal() == token
	}
}

func isDown(reason Reason) func(State) bool {
	return func(s State) bool { return s.Backend == nil && s.Unavailable != nil && s.Unavailable.Reason == reason }
}

// waitChecked waits until a re-check newer than after has been recorded.
func waitChecked(t *testing.T, w *Watcher, after time.Time) State {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if s := w.Current(); s.CheckedAt.After(after) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no re-check happened")
	return State{}
}

func TestWatcherBeforeStartAndLifecycle(t *testing.T) {
	dir := t.TempDir()
	w := NewWatcher(stateTarget(dir), nil)
	if s := w.Current(); s.Generation != 0 || s.Backend != nil || s.Unavailable != nil || s.Resolved.StateDir != dir {
		t.Fatalf("before start: %+v", s)
	}
	ch, cancel := w.Subscribe()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("Close must close subscriber channels")
	}
	cancel()
	if err := w.Close(); err != nil {
		t.Fatal("Close is idempotent")
	}
	if err := w.Start(context.Background()); err == nil {
		t.Fatal("Start after Close must fail")
	}
	ctx, c2 := context.WithTimeout(context.Background(), time.Second)
	defer c2()
	if s := w.Wait(ctx, 0); s.Generation != 0 {
		t.Fatal("Wait on a closed watcher returns the current state")
	}
}

// Restart on a new port, written atomically: the token first, then the port file.
// The generation moves exactly once per real change and never on a re-verification.
func TestWatcherAtomicRestartNewPortAndGenerations(t *testing.T) {
	a := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, a)
	w, events := startSubscribed(t, stateTarget(dir), 0, deadPort(t))
	s := waitFor(t, w, "first backend", isUpOn(a.Port, a.Token()))
	if s.Generation != 1 || s.Since.IsZero() {
		t.Fatalf("first verified state: gen %d since %v", s.Generation, s.Since)
	}
	if ev := nextEvent(t, events); ev.Kind != EventUp || ev.State.Generation != 1 || ev.Previous.Generation != 0 {
		t.Fatalf("first event %+v", ev)
	}

	// Re-verifications of the same instance do not bump the generation.
	for i := 0; i < 3; i++ {
		before := w.Current().CheckedAt
		w.Recheck()
		if got := waitChecked(t, w, before); got.Generation != 1 || !got.Since.Equal(s.Since) {
			t.Fatalf("re-verification bumped the generation: %d", got.Generation)
		}
	}

	b := newFakeBackend(t)
	before := w.Current().CheckedAt
	writeAtomic(t, TokenFile(dir, b.Port), b.Token()) // new token, port file still names a
	if got := waitChecked(t, w, before); got.Generation != 1 || got.Backend.Port != a.Port {
		t.Fatalf("a token file for another port changed the answer: %+v", got)
	}
	writeAtomic(t, filepath.Join(dir, PortFileName), strconv.Itoa(b.Port))
	s2 := waitFor(t, w, "second backend", isUpOn(b.Port, b.Token()))
	if s2.Generation != 2 || s2.Backend.RuntimeID() != b.RuntimeID() {
		t.Fatalf("swap: gen %d backend %+v", s2.Generation, s2.Backend)
	}
	ev := nextEvent(t, events)
	if ev.Kind != EventChanged || ev.State.Generation != 2 || ev.Previous.Backend.Port != a.Port {
		t.Fatalf("swap event %+v", ev)
	}
	assertNoSecret(t, a.Token(), s2, ev)
	assertNoSecret(t, b.Token(), s2, ev)
}

// A restart on the same port with the token rewritten in place (truncate + write).
func TestWatcherInPlaceRestartSamePort(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w := startWatcher(t, stateTarget(dir), 0, deadPort(t))
	s := waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	oldRID := s.Backend.RuntimeID()

	f.restart()
	writeInPlace(t, TokenFile(dir, f.Port), f.Token())
	writeInPlace(t, filepath.Join(dir, PortFileName), strconv.Itoa(f.Port))
	s2 := waitFor(t, w, "restarted backend", isUpOn(f.Port, f.Token()))
	if s2.Backend.RuntimeID() == oldRID || s2.Generation <= s.Generation {
		t.Fatalf("restart not seen as a new instance: %+v gen %d", s2.Backend, s2.Generation)
	}
}

// A token rewritten in place in two halves: the half-written file is held back and
// retried, so the only published change is the swap itself.
func TestWatcherPartialTokenWriteIsRetriedNotPublished(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	held := make(chan struct{}, 1)
	w := NewWatcher(stateTarget(dir), &WatchOptions{Poll: time.Hour, Probe: testOpts(deadPort(t))})
	w.checkHook = func(res discoveryResult, published bool) {
		if !published && res.transient {
			select {
			case held <- struct{}{}:
			default:
			}
		}
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	events, unsub := w.Subscribe()
	defer unsub()

	// The backend swaps instantly; the file follows in two writes.
	newTok := testkit.NewToken(t)
	f.set(func(f *fakeBackend) { f.token = newTok })
	tf, err := os.OpenFile(TokenFile(dir, f.Port), os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tf.WriteString(newTok[:20]); err != nil {
		t.Fatal(err)
	}
	select { // the partial file has been read, and held back, at least once
	case <-held:
	case <-time.After(waitTimeout):
		t.Fatal("the partial token file was never read")
	}
	if _, err := tf.WriteString(newTok[20:]); err != nil {
		t.Fatal(err)
	}
	tf.Close()

	s2 := waitFor(t, w, "new token", isUpOn(f.Port, newTok))
	if s2.Generation != s.Generation+1 {
		t.Fatalf("generation %d → %d, want exactly one bump", s.Generation, s2.Generation)
	}
	if ev := nextEvent(t, events); ev.Kind != EventChanged {
		t.Fatalf("event %+v, want only changed", ev)
	}
}

// The port file rewritten in place with a new port.
func TestWatcherInPlaceNewPort(t *testing.T) {
	a := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, a)
	w := startWatcher(t, stateTarget(dir), 0, deadPort(t))
	waitFor(t, w, "a", isUpOn(a.Port, a.Token()))
	b := newFakeBackend(t)
	writeInPlace(t, TokenFile(dir, b.Port), b.Token())
	writeInPlace(t, filepath.Join(dir, PortFileName), strconv.Itoa(b.Port))
	waitFor(t, w, "b", isUpOn(b.Port, b.Token()))
}

// The state dir (and its parent) do not exist when the watcher starts.
func TestWatcherDirCreatedAfterStart(t *testing.T) {
	f := newFakeBackend(t)
	dir := filepath.Join(t.TempDir(), "state", "resmon")
	w := startWatcher(t, stateTarget(dir), 0, deadPort(t))
	s := waitFor(t, w, "first check", isDown(ReasonNoToken))
	if s.Unavailable.Message == "" {
		t.Fatal("empty message")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	waitFor(t, w, "backend after mkdir", isUpOn(f.Port, f.Token()))
}

// Deleting the state dir takes the backend down; recreating it brings it back.
func TestWatcherDirDeletedAndRecreated(t *testing.T) {
	f := newFakeBackend(t)
	dir := filepath.Join(t.TempDir(), "resmon")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	w := startWatcher(t, stateTarget(dir), 0, deadPort(t))
	waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "down after rm -rf", func(s State) bool { return s.Backend == nil })

	f.restart()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeInstance(t, dir, f)
	waitFor(t, w, "backend after recreate", isUpOn(f.Port, f.Token()))

	// And again, to prove the watch on the recreated directory is live.
	f.restart()
	writeInstance(t, dir, f)
	waitFor(t, w, "backend after second restart", isUpOn(f.Port, f.Token()))
}

// A backend killed with its files left behind: Recheck finds it gone.
func TestWatcherRecheckAfterBackendDies(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w, events := startSubscribed(t, stateTarget(dir), 0, deadPort(t))
	s := waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	nextEvent(t, events)

	f.stop()
	w.Recheck()
	s2 := waitFor(t, w, "down", isDown(ReasonNotRunning))
	if s2.Generation != s.Generation+1 {
		t.Fatalf("gen %d → %d", s.Generation, s2.Generation)
	}
	ev := nextEvent(t, events)
	if ev.Kind != EventDown || ev.Previous.Backend == nil || ev.State.Unavailable.Tried[0] != f.Base {
		t.Fatalf("event %+v", ev)
	}
	// Still down for the same reason: no new generation.
	before := w.Current().CheckedAt
	w.Recheck()
	if got := waitChecked(t, w, before); got.Generation != s2.Generation {
		t.Fatalf("same unavailability bumped the generation")
	}
	// Down for a different reason (a stale token): still_down.
	f.start(f.Port)
	f.set(func(f *fakeBackend) { f.token = testkit.NewToken(t) })
	w.Recheck()
	s3 := waitFor(t, w, "token refused", isDown(ReasonTokenRefused))
	if s3.Generation != s2.Generation+1 {
		t.Fatalf("gen %d → %d", s2.Generation, s3.Generation)
	}
	if ev := nextEvent(t, events); ev.Kind != EventStillDown {
		t.Fatalf("event %+v", ev)
	}
}

// The safety poll alone notices a dead backend whose files remain.
func TestWatcherPollNoticesDeadBackend(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w := startWatcher(t, stateTarget(dir), 30*time.Millisecond, deadPort(t))
	waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	f.stop()
	waitFor(t, w, "down by poll", isDown(ReasonNotRunning))
}

// With the backend's process named in its health answer, the watcher waits on its end
// instead of polling (the poll is an hour here): a SIGKILLed backend whose files remain is
// noticed by that event, and an idle daemon is never woken to look.
func TestWatcherNoticesTheEndOfTheBackendsProcess(t *testing.T) {
	proc := exec.Command("sleep", "120") // stands for the backend's process
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Process.Kill(); _ = proc.Wait() })
	if gone, stop := procexit.Watch(proc.Process.Pid, func() bool { return true }); gone == nil {
		t.Skip("no pidfd here: the watcher polls (TestWatcherPollNoticesDeadBackend)")
	} else {
		stop()
	}
	f := newFakeBackend(t)
	f.set(func(f *fakeBackend) { f.pid = proc.Process.Pid })
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w := startWatcher(t, stateTarget(dir), time.Hour, deadPort(t))
	up := waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	f.stop() // its files stay behind, as after a SIGKILL
	if s := w.Current(); s.Generation != up.Generation {
		t.Fatalf("a pass ran before the process ended: %+v", s)
	}
	_ = proc.Process.Kill()
	waitFor(t, w, "down on the process's end", isDown(ReasonNotRunning))
}

// A subscriber that never reads must not stall the watcher, and gets the latest event.
func TestWatcherSlowSubscriberDoesNotBlock(t *testing.T) {
	f := newFakeBackend(t)
	dir := t.TempDir()
	writeInstance(t, dir, f)
	w := startWatcher(t, stateTarget(dir), 0, deadPort(t))
	slow, unsub := w.Subscribe()
	waitFor(t, w, "backend", isUpOn(f.Port, f.Token()))
	for i := 0; i < 3; i++ {
		f.restart()
		writeInstance(t, dir, f)
		waitFor(t, w, "restart", isUpOn(f.Port, f.Token()))
	}
	last := w.Current()
	select {
	case ev := <-slow:
		if ev.State.Generation != last.Generation {
			t.Fatalf("slow subscriber got gen %d, latest is %d", ev.State.Generation, last.Generation)
		}
	default:
		t.Fatal("slow subscriber got nothing")
	}
	unsub()
	if _, ok := <-slow; ok {
		t.Fatal("cancel must close the channel")
	}
	unsub() // idempotent
}

// Cancelling Start's context stops the watcher; Close afterwards still works.
func TestWatcherContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWatcher(stateTarget(t.TempDir()), &WatchOptions{Probe: testOpts(deadPort(t))})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err == nil {
		t.Fatal("second Start must fail")
	}
	waitFor(t, w, "first check", func(State) bool { return true })
	cancel()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
