package discovery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/resmongw/resmongw/internal/procexit"
	"github.com/resmongw/resmongw/scrub"
)

// EventKind says how a watcher's state changed.
type EventKind string

const (
	EventUp        EventKind = "up"         // a backend is verified where none was
	EventChanged   EventKind = "changed"    // a different backend instance replaced the verified one
	EventDown      EventKind = "down"       // no backend is verified any more (or the first check found none)
	EventStillDown EventKind = "still_down" // still unavailable, but the reason or message changed
)

// Event is one generation change, delivered to subscribers.
type Event struct {
	Kind     EventKind
	State    State
	Previous State
}

// WatchOptions tune a Watcher. Zero values mean the defaults.
type WatchOptions struct {
	// Debounce collapses a burst of file events into one re-check. Small, because the
	// time from the files landing to the first successful call is what users feel.
	Debounce time.Duration // default 25 ms
	// Poll is the safety re-verification interval while a backend is verified and its
	// process cannot be waited on (its health answer named no pid, or no pidfd: macOS, Linux
	// before 5.3): it catches a SIGKILLed backend whose files remain. Where the process can be
	// waited on, its end is the event that starts a pass, and nothing polls. While no backend
	// is verified nothing polls either: every call runs a pass of its own before it answers
	// unavailable (Settle), and so does status. A pass (file reads, a connection and a health
	// probe) wakes an idle daemon dozens of times, its runtime's sysmon included, and a call
	// to a killed backend finds it gone by itself (refused connection, then Recheck): the poll
	// only keeps the published state from going stale while nobody calls, so it is rare.
	Poll time.Duration // default 30 s
	// Probe tunes each discovery pass.
	Probe *Options
	// Logger, when set, receives state changes and watch problems. It is never given the token.
	Logger func(msg string, kv ...any)
}

const (
	defaultDebounce = 25 * time.Millisecond
	defaultPoll     = 30 * time.Second
	// retryWindow is how long after a file event (or Recheck, or start) failed checks
	// are retried with backoff: the backend writes its token before it answers.
	retryWindow = 10 * time.Second
	// closeBound is how long Close waits for the discovery goroutine.
	closeBound = 5 * time.Second
)

// retryBackoff is the delay before each successive retry inside the retry window.
var retryBackoff = []time.Duration{
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second,
}

var (
	errStarted = errors.New("discovery: watcher already started")
	errClosed  = errors.New("discovery: watcher closed")
)

// Watcher keeps the backend for one Target verified: it watches the state directory and
// the port file's directory, re-discovers on every relevant change, and publishes a
// State with a generation that moves only when the answer really changes. One goroutine
// owns the discovery work; readers see snapshots under a mutex.
type Watcher struct {
	target Target
	opts   WatchOptions
	probe  Options

	recheck chan struct{} // capacity 1: coalesces requests
	settle  chan chan struct{}

	mu       sync.Mutex
	state    State
	changed  chan struct{} // closed and replaced on each generation bump
	closedCh chan struct{}
	subs     map[chan Event]struct{}
	started  bool
	closed   bool
	cancel   context.CancelFunc
	done     chan struct{}

	// held are scrub holds on the tokens of the current and the previous verified backend
	// (owned by the run goroutine): a token in use can never be evicted from the scrubber,
	// however many other tokens the process reads.
	held []heldToken

	// passHook, set by tests before Start, runs right after each discovery pass has read
	// the files and before its result is handled: where a file change lands "just after".
	passHook func()

	// checkHook, set by tests before Start, sees every finished discovery pass and
	// whether it was published (false: held back as a file caught mid-write).
	checkHook func(res discoveryResult, published bool)
}

var _ Source = (*Watcher)(nil)

// NewWatcher returns a watcher for t. It does no I/O until Start.
func NewWatcher(t Target, opts *WatchOptions) *Watcher {
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = defaultDebounce
	}
	if o.Poll <= 0 {
		o.Poll = defaultPoll
	}
	return &Watcher{
		// Resolved is known without I/O; filling it lets callers log paths before the first check.
		state:    State{Resolved: t.Resolve()},
		target:   t,
		opts:     o,
		probe:    o.Probe.withDefaults(),
		recheck:  make(chan struct{}, 1),
		settle:   make(chan chan struct{}),
		changed:  make(chan struct{}),
		closedCh: make(chan struct{}),
		subs:     map[chan Event]struct{}{},
		done:     make(chan struct{}),
	}
}

// Target is the target this watcher serves.
func (w *Watcher) Target() Target { return w.target }

// Start begins watching. The first check runs at once, asynchronously; Wait(ctx, 0)
// returns when it has finished. Cancelling ctx stops the watcher like Close does.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return errClosed
	case w.started:
		return errStarted
	}
	w.started = true
	ctx, w.cancel = context.WithCancel(ctx)
	l := newLoop(w.target.Resolve(), w.log)
	go w.run(ctx, l)
	return nil
}

// Close stops the watcher's goroutine, drops its directories from the shared file watch and closes subscriber
// channels. It is idempotent and safe to call without Start.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.closedCh)
	cancel, started := w.cancel, w.started
	w.mu.Unlock()
	if started {
		cancel()
		// Everything the pass does ends with its context (probes) or cannot block (files are
		// opened non-blocking), so this is quick; the bound is for what no code controls, like
		// a hung network filesystem, so that shutdown stays bounded whatever discovery does.
		select {
		case <-w.done:
		case <-time.After(closeBound):
			w.log("discovery: watcher did not stop in time; leaving it behind", "bound", closeBound.String())
		}
	}
	w.mu.Lock()
	for ch := range w.subs {
		close(ch)
	}
	w.subs = nil
	w.mu.Unlock()
	return nil
}

// Current returns the latest state (Generation 0, neither Backend nor Unavailable, but
// Resolved filled in, before the first check has finished).
func (w *Watcher) Current() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// Wait blocks until the generation is greater than gen, ctx ends or the watcher is
// closed, and returns the latest state in every case.
func (w *Watcher) Wait(ctx context.Context, gen uint64) State {
	for {
		w.mu.Lock()
		s, ch := w.state, w.changed
		w.mu.Unlock()
		if s.Generation > gen {
			return s
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return w.Current()
		case <-w.closedCh:
			return w.Current()
		}
	}
}

// Recheck asks for a re-verification soon (after the debounce) and returns at once.
// Failures after it are retried with backoff for a few seconds, as after a file event,
// because a caller usually asks after a 401 or a dead connection: a restart in progress.
func (w *Watcher) Recheck() {
	select {
	case w.recheck <- struct{}{}:
	default:
	}
}

// Settle returns the state as of a discovery pass that began after Settle was called: it
// runs one at once (concurrent callers share it) and waits for it, bounded by ctx. A caller
// about to answer "unavailable" uses it so that the answer never comes from a view older
// than the call, whatever fsnotify has delivered yet.
//
// It closes a window every restart opens: resmon removes its files, the watcher checks and
// publishes "no token" for the default port, resmon writes its new files, and a call that
// arrives before the debounced re-check would be answered from that intermediate view. A
// pass costs file reads and, when a token is found, one health probe; it answers quickly
// for a resmon that is not running.
func (w *Watcher) Settle(ctx context.Context) State {
	reply := make(chan struct{})
	select {
	case w.settle <- reply:
	case <-ctx.Done():
		return w.Current()
	case <-w.closedCh:
		return w.Current()
	case <-w.done:
		return w.Current()
	}
	select {
	case <-reply:
	case <-ctx.Done():
	case <-w.closedCh:
	}
	return w.Current()
}

// Subscribe returns a channel of generation changes and a function that ends the
// subscription. The channel holds one event: a subscriber that falls behind gets the
// latest event, never a blocked watcher. The channel is closed by cancel or Close.
func (w *Watcher) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch, func() {}
	}
	w.subs[ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if _, ok := w.subs[ch]; ok {
				delete(w.subs, ch)
				close(ch)
			}
		})
	}
}

func (w *Watcher) log(msg string, kv ...any) {
	if w.opts.Logger != nil {
		w.opts.Logger(msg, kv...)
	}
}

// run is the one goroutine that owns discovery, timers and this watcher's share of the
// process's file watch (fswatch.go).
func (w *Watcher) run(ctx context.Context, l *loop) {
	defer close(w.done)
	defer l.close()
	defer func() {
		for _, h := range w.held {
			h.release()
		}
		w.held = nil
	}()

	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	// After each pass: the verified backend's process is waited on (exited), or the safety
	// poll armed where it cannot be; with no backend verified, neither.
	poll := time.NewTimer(time.Hour)
	poll.Stop()
	defer poll.Stop()
	var (
		exitPID  int
		exited   <-chan struct{}
		stopExit = func() {}
	)
	defer func() { stopExit() }()
	follow := func(b *Backend) {
		pid := 0
		if b != nil {
			pid = b.pid
		}
		if pid != exitPID {
			stopExit()
			exitPID, exited, stopExit = pid, nil, func() {}
			if pid > 0 {
				exited, stopExit = procexit.Watch(pid, func() bool { return true })
			}
		}
		poll.Stop()
		if b != nil && exited == nil {
			poll.Reset(w.opts.Poll)
		}
	}

	var (
		retryUntil time.Time // failed checks before this are retried
		backoffIdx int
	)
	// nudge starts (or extends) a retry window and schedules a debounced check.
	nudge := func() {
		retryUntil = time.Now().Add(retryWindow)
		backoffIdx = 0
		debounce.Reset(w.opts.Debounce)
	}
	check := func() {
		res := discover(ctx, w.target, &w.probe)
		if w.passHook != nil {
			w.passHook()
		}
		if ctx.Err() != nil {
			return // a pass cut short by Close says nothing about the backend
		}
		retry.Stop()
		now := w.probe.Now()
		if res.backend == nil && now.Before(retryUntil) {
			retry.Reset(retryBackoff[min(backoffIdx, len(retryBackoff)-1)])
			backoffIdx++
			if res.transient && w.Current().Generation > 0 {
				// A file caught mid-write: keep the last answer, look again shortly.
				if w.checkHook != nil {
					w.checkHook(res, false)
				}
				return
			}
		} else {
			retryUntil = time.Time{}
		}
		w.publish(res, now)
		follow(res.backend)
		if w.checkHook != nil {
			w.checkHook(res, true)
		}
	}

	l.sync()
	retryUntil = time.Now().Add(retryWindow) // the backend may be starting with us
	check()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kicks():
			nudge()
		case err := <-l.resyncs():
			if err != nil {
				// ErrEventOverflow means events were lost; any other error may mean the same.
				w.log("discovery: watch error, rescanning", "error", err.Error())
			}
			l.sync()
			nudge()
		case <-w.recheck:
			nudge()
		case reply := <-w.settle:
			// Every Settle blocked in its send right now asked before the pass below begins,
			// so that one pass answers them all.
			replies := []chan struct{}{reply}
		drain:
			for {
				select {
				case r := <-w.settle:
					replies = append(replies, r)
				default:
					break drain
				}
			}
			debounce.Stop()
			check()
			for _, r := range replies {
				close(r)
			}
		case <-debounce.C:
			check()
		case <-retry.C:
			check()
		case <-poll.C:
			l.sync()
			check()
		case <-exited:
			// The backend's process ended: look now, and again while it may be restarting.
			// The watch is spent; the pass's follow starts the next one (or the poll).
			exitPID, exited = 0, nil
			stopExit()
			stopExit = func() {}
			nudge()
		}
	}
}

// publish installs a discovery result, bumping the generation only on a real change.
func (w *Watcher) publish(res discoveryResult, now time.Time) {
	w.mu.Lock()
	prev := w.state
	next := State{
		Generation:  prev.Generation,
		Backend:     res.backend,
		Unavailable: res.unavail,
		Resolved:    res.resolved,
		Candidates:  res.candidates,
		CheckedAt:   now,
		Since:       prev.Since,
	}
	kind, bump := classify(prev, next)
	if !bump {
		w.state = next
		w.mu.Unlock()
		return
	}
	next.Generation++
	next.Since = now
	w.state = next
	close(w.changed)
	w.changed = make(chan struct{})
	ev := Event{Kind: kind, State: next, Previous: prev}
	for ch := range w.subs {
		offer(ch, ev)
	}
	w.mu.Unlock()

	if b := next.Backend; b != nil {
		w.holdToken(b.Token.Reveal())
		w.log("discovery: backend "+string(kind), "generation", next.Generation, "base_url", b.BaseURL,
			"version", b.Version, "runtime_id", b.RuntimeID(), "port_source", string(b.PortSource))
	} else {
		w.log("discovery: backend "+string(kind), "generation", next.Generation,
			"reason", string(next.Unavailable.Reason), "message", next.Unavailable.Message)
	}
}

// classify decides whether next is a new generation after prev, and what kind.
func classify(prev, next State) (EventKind, bool) {
	first := prev.Backend == nil && prev.Unavailable == nil
	switch {
	case first && next.Backend != nil:
		return EventUp, true
	case first:
		return EventDown, true
	case prev.Backend != nil && next.Backend != nil:
		if prev.Backend.SameInstance(next.Backend) {
			return "", false
		}
		return EventChanged, true
	case prev.Backend != nil:
		return EventDown, true
	case next.Backend != nil:
		return EventUp, true
	case prev.Unavailable.Reason != next.Unavailable.Reason || prev.Unavailable.Message != next.Unavailable.Message:
		return EventStillDown, true
	}
	return "", false
}

// offer delivers ev without blocking, replacing an undelivered older event. Only the
// owner goroutine sends, under w.mu, so the drain-then-send cannot race another sender.
func offer(ch chan Event, ev Event) {
	select {
	case ch <- ev:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- ev:
	default:
	}
}

type heldToken struct {
	token   string
	release func()
}

// holdToken keeps tok scrubbed while it is the current or the previous generation's token.
// Only the run goroutine calls it.
func (w *Watcher) holdToken(tok string) {
	if n := len(w.held); n > 0 && w.held[n-1].token == tok {
		return
	}
	w.held = append(w.held, heldToken{token: tok, release: scrub.Hold(tok)})
	if len(w.held) > 2 {
		w.held[0].release()
		w.held = w.held[1:]
	}
}
