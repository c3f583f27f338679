//go:build linux || darwin

package trustfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/resmongw/resmongw/ours"
)

// ReadFile reads at most max bytes of path, which must be a regular file owned by this
// process's effective user, not writable by anyone else (nor readable, for Secret), in a
// directory that passes CheckDir. The file is opened relative to the checked directory
// with O_NOFOLLOW (a symlink is refused, not followed) and O_NONBLOCK (a FIFO is refused at
// once instead of hanging the caller until someone writes to it), and every check is made
// on the opened descriptor, so nothing can be swapped between the check and the read.
//
// A missing file is an error satisfying errors.Is(err, fs.ErrNotExist); a refusal is an
// *Error; anything else is a plain error in words.
func ReadFile(path string, kind Kind, max int) ([]byte, error) {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	dfd, err := openDir(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT):
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		case errors.Is(err, unix.ELOOP):
			return nil, &Error{Path: path, Problem: "is a symbolic link, which is never followed",
				Fix: "replace it with the file itself (resmon writes a regular file there when it starts)"}
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return nil, errors.New("is not readable (permission denied)")
		}
		return nil, fmt.Errorf("cannot be opened (%v)", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("cannot be read (%v)", err)
	}
	mode := fileMode(uint32(st.Mode))
	if !mode.IsRegular() {
		return nil, &Error{Path: path, Problem: "is not a regular file (" + typeName(mode) + ")",
			Fix: "remove it: " + "rm " + shellQuote(path) + " (resmon writes a regular file there when it starts)"}
	}
	if err := checkOwnerMode(path, st.Uid, st.Gid, mode, kind, false); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 128)
	chunk := make([]byte, 512)
	for len(buf) <= max {
		n, err := unix.Read(fd, chunk)
		if n > 0 {
			buf = append(buf, chunk[:n]...)
		}
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot be read (%v)", err)
		}
		if n == 0 {
			return buf, nil
		}
	}
	return nil, fmt.Errorf("is larger than %d bytes", max)
}

// CheckDir checks a directory the daemon reads trusted files from: it must exist, be owned
// by this process's effective user and be writable by no one else; every directory above it
// (symlinks resolved) must be owned by that user or root and writable by no one else, unless
// it is sticky (like /tmp), where others cannot rename or remove what is not theirs.
func CheckDir(dir string) error {
	fd, err := openDir(filepath.Clean(dir))
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// CheckHolder checks a directory the daemon creates its own files in (the log's): it and
// every directory above it must be owned by this user or root and writable by no one else
// unless sticky. A sticky shared directory such as /tmp passes: others cannot rename or
// remove a file of ours in it.
func CheckHolder(dir string) error {
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return err
	}
	for p := real; ; p = filepath.Dir(p) {
		if err := checkAncestor(p, dir); err != nil {
			return err
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func checkAncestor(a, dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(a, &st); err != nil {
		return fmt.Errorf("cannot be checked: %s: %v", a, err)
	}
	mode := fileMode(uint32(st.Mode))
	what := "(a directory above " + dir + ")"
	if a == dir {
		what = "(a directory)"
	}
	switch ours.Judge(st.Uid, st.Gid, mode, true) {
	case ours.OtherOwner:
		return &Error{Path: a, Problem: what + " belongs to another user, who could replace what is in it",
			Found: found(st.Uid, mode), Fix: "use a directory tree that only you and root own"}
	case ours.OthersWrite:
		return &Error{Path: a, Problem: what + " is writable by other users, who could replace what is in it",
			Found: found(st.Uid, mode), Fix: writableFix(a, st.Uid, true)}
	}
	return nil
}

// openDir checks dir and its ancestors as CheckDir does and returns an open descriptor of
// it, so files are then opened relative to exactly the directory that was checked.
func openDir(dir string) (int, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return -1, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
		}
		return -1, fmt.Errorf("cannot be resolved (%v)", unwrap(err))
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return -1, err
	}
	// The ancestors, root first.
	var chain []string
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		chain = append([]string{p}, chain...)
		if p == filepath.Dir(p) {
			break
		}
	}
	if real == filepath.Dir(real) {
		chain = nil // the root itself is the directory
	}
	for _, a := range chain {
		if err := checkAncestor(a, dir); err != nil {
			return -1, err
		}
	}
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT):
			return -1, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
		case errors.Is(err, unix.ENOTDIR):
			return -1, errNotDir
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return -1, errors.New("is not readable (permission denied)")
		}
		return -1, fmt.Errorf("cannot be opened (%v)", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("cannot be read (%v)", err)
	}
	if err := checkOwnerMode(dir, st.Uid, st.Gid, fileMode(uint32(st.Mode)), Public, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// errNotDir is what a path that is not a directory gives.
var errNotDir = errors.New("is not a directory")

// ErrNotDir reports whether err says the path is not a directory.
func ErrNotDir(err error) bool { return errors.Is(err, errNotDir) }

func checkOwnerMode(path string, uid, gid uint32, mode fs.FileMode, kind Kind, isDir bool) error {
	me := uint32(os.Geteuid())
	what, chmod := "file", "chmod 600 "
	if isDir {
		what, chmod = "directory", "chmod 700 "
	}
	verdict := ours.Judge(uid, gid, mode, false)
	if verdict == ours.OtherOwner {
		fix := fmt.Sprintf("the %s must be your own (%s): point RESMON_STATE_DIR at your resmon's, or run: chown %d %s", what, owner(me), me, shellQuote(path))
		if isDir { // never a chown of a directory others may use (/tmp, a team's)
			fix = fmt.Sprintf("the directory must be your own (%s): point RESMON_STATE_DIR at your resmon's state directory", owner(me))
		}
		return &Error{Path: path, Problem: "belongs to another user, so it cannot be trusted",
			Found: found(uid, mode), Fix: fix}
	}
	problem := ""
	switch {
	case verdict == ours.OthersWrite:
		problem = "is writable by other users"
	case kind == Secret && ours.ReadableByOthers(mode):
		problem = "is readable by other users"
	}
	if problem != "" {
		fix := "run: " + chmod + shellQuote(path)
		switch {
		case isDir && mode&fs.ModeSticky != 0: // a shared directory such as /tmp: never chmod it
			fix = "a directory others share is no state directory: point RESMON_STATE_DIR at your resmon's state directory"
		case isDir:
			fix = "if it is resmon's own and nobody else uses it, run: " + chmod + shellQuote(path) + "; otherwise point RESMON_STATE_DIR at your resmon's state directory"
		}
		return &Error{Path: path, Problem: problem + ", so it cannot be trusted", Found: found(uid, mode), Fix: fix}
	}
	return nil
}

func openat(dfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a plain file"
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
