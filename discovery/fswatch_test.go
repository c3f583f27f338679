package discovery

import (
	"os"
	"path/filepath"
	"testing"
)

// inotifyInstances counts this process's inotify instances (Linux; -1 elsewhere).
func inotifyInstances(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// Issue 26.2: every Watcher shares the process's one inotify instance, however many targets
// there are (one per watcher once took all 128 of a user's instances); a directory wanted by
// two watchers is watched once and stays watched while either wants it; each watcher still
// sees its own files change; the instance goes with the last watcher.
func TestWatchersShareOneInotifyInstance(t *testing.T) {
	if inotifyInstances(t) < 0 {
		t.Skip("no /proc/self/fd to count inotify instances")
	}
	if n := inotifyInstances(t); n != 0 {
		t.Fatalf("%d inotify instances before any watcher (a watcher leaked from an earlier test)", n)
	}
	const n = 40
	dead := deadPort(t)
	shared := t.TempDir()
	var ws []*Watcher
	for i := 0; i < n; i++ {
		dir := filepath.Join(t.TempDir(), "resmon")
		if i%2 == 1 {
			dir = shared // half of them watch one directory together
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, startWatcher(t, stateTarget(dir), 0, dead))
	}
	for _, w := range ws {
		waitFor(t, w, "first check", isDown(ReasonNoToken))
	}
	if got := inotifyInstances(t); got != 1 {
		t.Fatalf("%d watchers hold %d inotify instances, want 1", n, got)
	}
	files.mu.Lock()
	watchedShared := files.refs[shared]
	files.mu.Unlock()
	if watchedShared != n/2 {
		t.Fatalf("the shared directory is wanted by %d watchers, want %d", watchedShared, n/2)
	}

	// Each watcher still sees its own directory: a backend appears in one private directory
	// and in the shared one.
	f := newFakeBackend(t)
	writeInstance(t, ws[6].Target().StateDir, f)
	waitFor(t, ws[6], "backend in its own directory", isUpOn(f.Port, f.Token()))
	if st := ws[8].Current(); st.Backend != nil {
		t.Fatalf("another watcher's directory changed this one: %+v", st)
	}
	// Closing watchers of the shared directory leaves it watched for the others.
	for i := 1; i < n-2; i += 2 {
		_ = ws[i].Close()
	}
	writeInstance(t, shared, f)
	waitFor(t, ws[n-1], "backend in the shared directory", isUpOn(f.Port, f.Token()))

	for _, w := range ws {
		_ = w.Close()
	}
	if got := inotifyInstances(t); got != 0 {
		t.Fatalf("%d inotify instances after every watcher closed, want 0", got)
	}
	files.mu.Lock()
	left := len(files.refs)
	files.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d directories still counted after every watcher closed", left)
	}
}
