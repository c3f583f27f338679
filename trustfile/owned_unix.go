//go:build linux || darwin

package trustfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/resmongw/resmongw/ours"
)

// Check applies the one "is this ours and not writable by others" rule (package ours) to a
// path its caller has stat'ed (with Lstat, so a symbolic link is seen as one): nil when the
// file belongs to this process's effective user and nobody else can change it, otherwise an
// *Error naming what was found and the fix. above relaxes it for a directory on the way to
// what is used, or a link met there: root may own it, and a sticky directory passes.
func Check(path string, fi fs.FileInfo, above bool) error {
	uid, _, ok := ours.Owner(fi)
	if !ok {
		return &Error{Path: path, Problem: "has an owner that cannot be read, so it cannot be trusted"}
	}
	what := ""
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "is a symbolic link that "
	case fi.IsDir():
		what = "is a directory that "
	}
	switch ours.File(fi, above) {
	case ours.OtherOwner:
		return &Error{Path: path, Problem: what + "belongs to another user, so it cannot be trusted",
			Found: found(uid, fi.Mode()), Fix: "use a path that only you (and root) own"}
	case ours.OthersWrite:
		return &Error{Path: path, Problem: what + "is writable by other users, so it cannot be trusted",
			Found: found(uid, fi.Mode()), Fix: writableFix(path, uid, fi.IsDir())}
	}
	return nil
}

// writableFix is the advice for a path others can write. Never a plain chmod of a
// directory: others may share it on purpose (/tmp, a team's project directory), and a
// tighter mode would lock them out; and never one of a directory that is not ours.
func writableFix(path string, uid uint32, isDir bool) string {
	if !isDir {
		return "run: chmod go-w " + shellQuote(path)
	}
	fix := "use a directory only you can write"
	if ours.Mine(uid) {
		fix += "; or, if nobody else needs to write in this one of yours: chmod go-w " + shellQuote(path)
	}
	return fix
}

// ResolveForWrite resolves path for a program about to replace the file there, following
// only what nobody else controls: every directory on the way (the file's own included) and
// every symbolic link met must pass Check (above), and an existing file itself must be a
// regular file that passes Check. A dotfile manager's link of the user's own is followed; a
// link another user planted, or any link or file in a directory others can write (a sticky
// one excepted), is refused before anything is read or written. Since nobody else can change
// a directory that passed, the resolved path stays what was checked.
//
// It returns the path with every link resolved. The file, and directories at the end of the
// path, may be missing: missing is how many trailing components (the file's included) do not
// exist yet; they would be created in the last directory that does, which passed.
func ResolveForWrite(path string) (real string, missing int, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, err
	}
	rest := splitPath(abs)
	done := "/"
	if fi, err := os.Lstat(done); err != nil {
		return "", 0, err
	} else if err := Check(done, fi, true); err != nil {
		return "", 0, err
	}
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, rest...)...), 1 + len(rest), nil
		}
		if err != nil {
			return "", 0, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := Check(next, fi, true); err != nil {
				return "", 0, err
			}
			if links++; links > 40 {
				return "", 0, &Error{Path: path, Problem: "goes through too many symbolic links"}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", 0, err
			}
			if filepath.IsAbs(target) {
				done = "/"
			}
			rest = append(splitPath(target), rest...)
		case fi.IsDir():
			if err := Check(next, fi, true); err != nil {
				return "", 0, err
			}
			done = next
		case len(rest) > 0:
			return "", 0, &Error{Path: next, Problem: "is not a directory"}
		case !fi.Mode().IsRegular():
			return "", 0, &Error{Path: next, Problem: "is not a regular file (" + typeName(fi.Mode()) + ")",
				Fix: "remove it, or name another file"}
		default:
			if err := Check(next, fi, false); err != nil {
				return "", 0, err
			}
			done = next
		}
	}
	return done, 0, nil
}

// splitPath is path's components, without empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}
