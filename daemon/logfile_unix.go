//go:build linux || darwin

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/resmongw/resmongw/ours"
	"github.com/resmongw/resmongw/trustfile"
)

// Log rotation: the file is kept under logMaxSize by moving it to <name>.1 (and .1 to .2 …)
// and starting a new one; logBackups old files are kept.
const (
	logMaxSize = 10 << 20
	logBackups = 3
)

// logFile is the daemon's log file. Its directory is checked and opened once (trustfile:
// ours, writable by nobody else, and so its ancestors), and every file in it is created,
// opened, renamed and removed relative to that open directory with O_NOFOLLOW, each check
// made on the opened descriptor: nothing is ever opened again by a name that could have
// been pointed elsewhere after the check.
type logFile struct {
	mu      sync.Mutex
	dir     *os.File
	name    string
	f       *os.File
	size    int64
	max     int64
	backups int
}

// openLogFile creates the log's directory (0700) if need be, checks and opens it, and opens
// or creates the log in it.
func openLogFile(path string, max int64, backups int) (*logFile, error) {
	dirName, name := filepath.Split(filepath.Clean(path))
	if err := os.MkdirAll(dirName, 0o700); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	dir, err := trustfile.OpenDir(dirName)
	if err != nil {
		var te *trustfile.Error
		if errors.As(err, &te) {
			return nil, fmt.Errorf("log directory: %w", err)
		}
		return nil, fmt.Errorf("log directory %s %w", filepath.Clean(dirName), err)
	}
	l := &logFile{dir: dir, name: name, max: max, backups: backups}
	if err := l.open(path, 0); err != nil {
		dir.Close()
		return nil, err
	}
	return l, nil
}

// open opens (extra: O_EXCL for a new file after a rotation) the log in its directory and
// checks it on the descriptor: a regular file of ours, made 0600.
func (l *logFile) open(path string, extra int) error {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(int(l.dir.Fd()), l.name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|
			unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY|extra, 0o600)
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: "is a symbolic link, which is never followed",
			Fix: "remove it, or pass --log-file a path of your own"})
	case errors.Is(err, unix.ENXIO): // a FIFO nobody reads, refused by O_NONBLOCK instead of hanging
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: "is not a regular file (a FIFO)", Fix: "remove it, or pass --log-file another path"})
	case err != nil:
		return fmt.Errorf("log file %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: "is not a regular file", Fix: "remove it, or pass --log-file another path"})
	}
	// The one rule (package ours) on the descriptor: another user's file is refused. One of
	// ours that others may write is made private below instead: it is ours to change, and
	// nobody else could have put it in the checked directory.
	switch ours.File(fi, false) {
	case ours.OtherOwner, ours.OwnerUnknown:
		f.Close()
		uid, _, _ := ours.Owner(fi)
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", uid, os.Geteuid()),
			Fix: "remove it, or pass --log-file a path of your own"})
	}
	// O_CREAT's mode applies to a new file only; an existing one of ours is made private.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		f.Close()
		return fmt.Errorf("log file %s: %w", path, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil { // O_NONBLOCK was for the open only
		f.Close()
		return fmt.Errorf("log file %s: %w", path, err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its bound.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate moves name to name.1 (name.1 to name.2, …; the oldest is replaced) within the
// open directory and starts a new file. A failed rotation leaves the current file in use.
func (l *logFile) rotate() error {
	dfd := int(l.dir.Fd())
	backup := func(i int) string { return l.name + "." + strconv.Itoa(i) }
	for i := l.backups - 1; i >= 1; i-- {
		if err := unix.Renameat(dfd, backup(i), dfd, backup(i+1)); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("rotating the log: %w", err)
		}
	}
	if l.backups < 1 {
		if err := unix.Unlinkat(dfd, l.name, 0); err != nil {
			return fmt.Errorf("rotating the log: %w", err)
		}
	} else if err := unix.Renameat(dfd, l.name, dfd, backup(1)); err != nil {
		return fmt.Errorf("rotating the log: %w", err)
	}
	return l.open(l.f.Name(), unix.O_EXCL)
}

// Close closes the file and its directory.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	l.dir.Close()
	return err
}
