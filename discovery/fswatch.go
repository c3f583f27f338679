package discovery

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// loop is the watcher goroutine's view of the file system: which directories it needs
// and the fsnotify watcher that covers them. Only the owner goroutine touches it.
//
// Directories are watched, never files: resmon replaces its token file by rename, which
// would silently kill a watch on the file itself. A directory that does not exist yet
// is covered by watching its nearest existing ancestor until it appears.
type loop struct {
	fsw      *fsnotify.Watcher // nil when fsnotify is unavailable: polling only
	wanted   []string          // the state dir and the port file's dir, deduplicated
	stateDir string
	portFile string
	log      func(string, ...any)
}

func newLoop(r Resolved, log func(string, ...any)) *loop {
	l := &loop{stateDir: filepath.Clean(r.StateDir), portFile: filepath.Clean(r.PortFile), log: log}
	for _, d := range []string{l.stateDir, filepath.Dir(l.portFile)} {
		if d != "" && d != "." && !contains(l.wanted, d) {
			l.wanted = append(l.wanted, d)
		}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		// Degrade, do not fail: the safety poll still keeps the state current.
		log("discovery: file watching unavailable, polling only", "error", err.Error())
		return l
	}
	l.fsw = fsw
	return l
}

func (l *loop) events() <-chan fsnotify.Event {
	if l.fsw == nil {
		return nil
	}
	return l.fsw.Events
}

func (l *loop) errors() <-chan error {
	if l.fsw == nil {
		return nil
	}
	return l.fsw.Errors
}

func (l *loop) close() {
	if l.fsw != nil {
		l.fsw.Close()
	}
}

// sync makes the watch list match the file system: each wanted directory if it exists,
// else its nearest existing ancestor. fsnotify drops a watch whose directory is removed,
// so its WatchList, not our memory, says what is watched.
func (l *loop) sync() {
	if l.fsw == nil {
		return
	}
	desired := map[string]bool{}
	for _, d := range l.wanted {
		if p := nearestDir(d); p != "" {
			desired[p] = true
		}
	}
	have := map[string]bool{}
	for _, p := range l.fsw.WatchList() {
		have[p] = true
	}
	for p := range desired {
		if have[p] {
			continue
		}
		if err := l.fsw.Add(p); err != nil {
			// Usually a race with a removal; the next event or poll fixes it.
			l.log("discovery: cannot watch directory", "dir", p, "error", err.Error())
		}
	}
	for p := range have {
		if !desired[p] {
			_ = l.fsw.Remove(p)
		}
	}
}

// relevant handles one event: it re-syncs the watch list when a wanted directory (or an
// ancestor on the way to it) appears or goes, and reports whether a re-check is due.
func (l *loop) relevant(ev fsnotify.Event) bool {
	name := filepath.Clean(ev.Name)
	for _, d := range l.wanted {
		if name == d || isAncestor(name, d) {
			l.sync()
			return true
		}
	}
	if name == l.portFile {
		return true
	}
	return filepath.Dir(name) == l.stateDir && strings.HasPrefix(filepath.Base(name), TokenFilePrefix)
}

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
