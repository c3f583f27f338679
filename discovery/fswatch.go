package discovery

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fileWatch is the process's one fsnotify watcher, shared by every Watcher. An inotify
// instance is a scarce per-user resource (128 by default on Linux, shared by all of the
// user's programs), and a daemon serves a target per harness environment: one instance per
// target once took all of a user's instances. Each directory is watched once, however many
// loops want it; each event goes to the loops it concerns. The instance is created when the
// first loop opens and closed when the last one closes.
type fileWatch struct {
	mu    sync.Mutex
	fsw   *fsnotify.Watcher
	refs  map[string]int // watched directory → how many loops want it
	loops map[*loop]struct{}
}

var files fileWatch

// open registers l and reports whether file events are available (false: polling only).
func (fw *fileWatch) open(l *loop) (bool, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.fsw == nil {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			return false, err
		}
		fw.fsw, fw.refs, fw.loops = fsw, map[string]int{}, map[*loop]struct{}{}
		go fw.dispatch(fsw)
	}
	fw.loops[l] = struct{}{}
	return true, nil
}

// close unregisters l, drops its directories and, with the last loop gone, the instance.
func (fw *fileWatch) close(l *loop) {
	fw.mu.Lock()
	if _, ok := fw.loops[l]; !ok {
		fw.mu.Unlock()
		return
	}
	delete(fw.loops, l)
	for d := range l.watched {
		fw.dropLocked(d)
	}
	l.watched = nil
	var last *fsnotify.Watcher
	if len(fw.loops) == 0 {
		last, fw.fsw, fw.refs, fw.loops = fw.fsw, nil, nil, nil
	}
	fw.mu.Unlock()
	if last != nil {
		_ = last.Close() // outside mu: Close waits for fsnotify's reader, which dispatch drains
	}
}

// want makes l's watched set exactly dirs. Every wanted directory is added again, even one
// already counted: inotify drops the watch of a directory that was removed, and re-adding
// an existing watch is harmless, so the kernel's list, not our counts, stays right. It
// returns the directories that could not be watched, with why.
func (fw *fileWatch) want(l *loop, dirs map[string]bool) map[string]error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.fsw == nil {
		return nil
	}
	var failed map[string]error
	for d := range dirs {
		if err := fw.fsw.Add(d); err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			failed[d] = err
			continue
		}
		if !l.watched[d] {
			l.watched[d] = true
			fw.refs[d]++
		}
	}
	for d := range l.watched {
		if !dirs[d] || failed[d] != nil {
			delete(l.watched, d)
			fw.dropLocked(d)
		}
	}
	return failed
}

func (fw *fileWatch) dropLocked(d string) {
	if fw.refs[d]--; fw.refs[d] <= 0 {
		delete(fw.refs, d)
		_ = fw.fsw.Remove(d) // an error means inotify already dropped it
	}
}

// dispatch hands each event of fsw to the loops it concerns, without ever blocking on one: a
// loop keeps at most one pending signal of each kind, so memory per loop is fixed whatever the
// event rate. An error (a queue overflow: events were lost) makes every loop rescan.
func (fw *fileWatch) dispatch(fsw *fsnotify.Watcher) {
	events, errs := fsw.Events, fsw.Errors
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			name := filepath.Clean(ev.Name)
			fw.mu.Lock()
			if fw.fsw == fsw {
				for l := range fw.loops {
					switch {
					case l.isDirEvent(name):
						signal(l.resync, nil)
					case l.isFileEvent(name):
						signal(l.kick, struct{}{})
					}
				}
			}
			fw.mu.Unlock()
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			fw.mu.Lock()
			if fw.fsw == fsw {
				for l := range fw.loops {
					signal(l.resync, err)
				}
			}
			fw.mu.Unlock()
		}
	}
}

// signal sends v unless a signal is already pending (the pending one covers it).
func signal[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// loop is one Watcher's view of the file system (or a PathWatch's): which directories it
// needs, through the shared fileWatch. Only the owner goroutine calls its methods but
// isDirEvent and isFileEvent, which read fields fixed at creation.
//
// Directories are watched, never files: resmon replaces its token file by rename, which
// would silently kill a watch on the file itself. A directory that does not exist yet
// is covered by watching its nearest existing ancestor until it appears.
type loop struct {
	shared  bool            // registered with files; false: polling only
	wanted  []string        // the directories it needs, deduplicated
	watched map[string]bool // what this loop holds in files (guarded by files.mu)
	kick    chan struct{}   // a relevant file changed
	resync  chan error      // a wanted directory (or an ancestor) changed, or events were lost (the error)
	isFile  func(name string) bool
	log     func(string, ...any)
}

// newLoop is a Watcher's loop: the state directory and the port file's directory, for the
// port file and the token files.
func newLoop(r Resolved, log func(string, ...any)) *loop {
	stateDir, portFile := filepath.Clean(r.StateDir), filepath.Clean(r.PortFile)
	return openLoop([]string{stateDir, filepath.Dir(portFile)}, func(name string) bool {
		if name == portFile {
			return true
		}
		return filepath.Dir(name) == stateDir && strings.HasPrefix(filepath.Base(name), TokenFilePrefix)
	}, log)
}

// openLoop registers a loop for the wanted directories, whose files isFile says matter.
func openLoop(dirs []string, isFile func(string) bool, log func(string, ...any)) *loop {
	l := &loop{isFile: isFile, log: log, watched: map[string]bool{}, kick: make(chan struct{}, 1), resync: make(chan error, 1)}
	for _, d := range dirs {
		if d != "" && d != "." && !contains(l.wanted, d) {
			l.wanted = append(l.wanted, d)
		}
	}
	ok, err := files.open(l)
	if err != nil {
		// Degrade, do not fail: the safety poll still keeps the state current.
		log("discovery: file watching unavailable, polling only", "error", err.Error())
	}
	l.shared = ok
	return l
}

// kicks delivers a signal per burst of relevant file changes (nil when polling only).
func (l *loop) kicks() <-chan struct{} {
	if !l.shared {
		return nil
	}
	return l.kick
}

// resyncs delivers a signal when the watch list must be redone: a wanted directory (or one
// on the way to it) appeared or went, or events were lost (then with the error).
func (l *loop) resyncs() <-chan error {
	if !l.shared {
		return nil
	}
	return l.resync
}

func (l *loop) close() {
	if l.shared {
		files.close(l)
	}
}

// sync makes the watch list match the file system: each wanted directory if it exists,
// else its nearest existing ancestor.
func (l *loop) sync() {
	if !l.shared {
		return
	}
	desired := map[string]bool{}
	for _, d := range l.wanted {
		if p := nearestDir(d); p != "" {
			desired[p] = true
		}
	}
	for d, err := range files.want(l, desired) {
		// Usually a race with a removal; the next event or poll fixes it.
		l.log("discovery: cannot watch directory", "dir", d, "error", err.Error())
	}
}

// isDirEvent reports whether name is a wanted directory or one on the way to it: its
// appearance or removal changes what must be watched.
func (l *loop) isDirEvent(name string) bool {
	for _, d := range l.wanted {
		if name == d || isAncestor(name, d) {
			return true
		}
	}
	return false
}

// isFileEvent reports whether name is a file the loop's owner looks at.
func (l *loop) isFileEvent(name string) bool { return l.isFile(name) }

// PathWatch reports changes of one path through the process's one file watch (fileWatch),
// for the daemon's check of its socket file: a daemon holds one inotify instance in all,
// whatever watches it runs. Only its owner goroutine calls its methods.
type PathWatch struct{ l *loop }

// WatchPath starts watching path (its directory, or while that is missing its nearest
// existing ancestor). Without file events (the user's inotify instances used up) both
// channels are nil and log says so.
func WatchPath(path string, log func(string, ...any)) *PathWatch {
	path = filepath.Clean(path)
	l := openLoop([]string{filepath.Dir(path)}, func(name string) bool { return name == path }, log)
	l.sync()
	return &PathWatch{l}
}

// Changed delivers a signal per burst of changes of the path: created, removed, replaced or
// written.
func (p *PathWatch) Changed() <-chan struct{} { return p.l.kicks() }

// Resync delivers a signal when its directory (or one on the way) appeared or went, or events
// were lost (then with the error): call Sync, then look.
func (p *PathWatch) Resync() <-chan error { return p.l.resyncs() }

// Sync makes the watch follow the directories as they are now.
func (p *PathWatch) Sync() { p.l.sync() }

// Close ends the watch.
func (p *PathWatch) Close() { p.l.close() }

// nearestDir is d if it is a directory, else its closest ancestor that is one.
func nearestDir(d string) string {
	for {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// isAncestor reports whether a is a proper ancestor directory of d.
func isAncestor(a, d string) bool {
	rel, err := filepath.Rel(a, d)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
