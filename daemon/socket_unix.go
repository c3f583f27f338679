//go:build linux || darwin

package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
)

// privateDir makes dir (and missing parents, 0700) and insists it passes the socket
// directory's rule (sessionwire.CheckSocketDir: real, ours, writable by nobody else; the
// socket's own mode and the peer check are further layers). A directory that was already
// there is checked, never changed: the socket path may be a flag or RESMONGW_SOCKET naming
// the home directory, /tmp or /, and tightening those would lock other people and programs
// out of them.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fault, fi, err := sessionwire.CheckSocketDir(dir)
	switch {
	case err != nil:
		return err
	case fault == sessionwire.DirNotReal:
		return fmt.Errorf("%s is not a directory (a symlink or a file); refusing to put the socket there", dir)
	case fault == sessionwire.DirOwnerUnknown, fault == sessionwire.DirOtherOwner:
		return fmt.Errorf("%s is owned by another user; refusing to put the socket there", dir)
	case fault == sessionwire.DirWritableByOthers:
		return fmt.Errorf("%s is writable by other users (mode %04o), so another user could replace the socket; refusing to put it there and leaving the directory as it is (%s)",
			dir, fi.Mode().Perm(), sessionwire.PrivateDirFix(dir, fi, "--socket or "+paths.SocketEnv))
	}
	return nil
}

// instanceLock is the single-instance lock: an exclusive flock on the socket's lock file
// (paths.LockFile) holding our pid, and a shared one on the directory's lock of older
// versions (paths.LegacyLockFile), which such a daemon holds exclusively. The kernel drops
// both when the process dies, even on SIGKILL.
type instanceLock struct{ f, legacy *os.File }

// errAlreadyRunning carries the holder's pid (best effort) for the message.
type errAlreadyRunning struct {
	path string
	pid  int
}

func (e *errAlreadyRunning) Error() string {
	if e.pid > 0 {
		return fmt.Sprintf("already running (pid %d; lock %s)", e.pid, e.path)
	}
	return fmt.Sprintf("already running (lock %s)", e.path)
}

// acquireLock takes socket's lock. The legacy lock is taken first, shared: daemons of this
// version on other sockets of the directory hold it too, and only an older daemon (holding
// it exclusively) makes it fail.
func acquireLock(socket string) (*instanceLock, error) {
	legacy, err := flockFile(paths.LegacyLockFile(socket), unix.LOCK_SH)
	if err != nil {
		return nil, err
	}
	f, err := flockFile(paths.LockFile(socket), unix.LOCK_EX)
	if err != nil {
		legacy.Close()
		return nil, err
	}
	// The pid is for people and for the "already running" message; the lock is the flock.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &instanceLock{f: f, legacy: legacy}, nil
}

// flockFile opens (creating) path and flocks it with how, never waiting.
func flockFile(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &errAlreadyRunning{path: path, pid: pid}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// stat describes the locked file (nil if unknown).
func (l *instanceLock) stat() os.FileInfo {
	if l == nil || l.f == nil {
		return nil
	}
	fi, err := l.f.Stat()
	if err != nil {
		return nil
	}
	return fi
}

// Release drops the locks. The files stay: removing one could let a second daemon lock a new
// inode while a third still waits on the old one.
func (l *instanceLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
	_ = l.legacy.Close() // never written; closing drops the shared lock
	l.legacy = nil
}

var umaskMu sync.Mutex

// listenPrivate binds the socket with mode 0600 from the start: net.Listen has no mode
// argument and a chmod afterwards would leave a window, so the process umask is narrowed
// around the bind. Any socket file already there is stale (its owner would hold the lock we
// hold), so it is removed first.
func listenPrivate(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; refusing to replace it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
	}
	umaskMu.Lock()
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// socketDir is the directory holding the socket and its lock.
func socketDir(socket string) string { return filepath.Dir(socket) }
