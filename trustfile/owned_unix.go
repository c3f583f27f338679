//go:build linux || darwin

package trustfile

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// verdict is what the one ownership rule finds.
type verdict int

const (
	trusted     verdict = iota
	otherOwner          // belongs to another user (or, where root may not own it, to root)
	othersWrite         // someone other than its owner can change it
)

// ours is the one rule of trust for a path: it belongs to this process's effective user and
// nobody else can change it. above is for a directory on the way to what is used (or a
// symbolic link met there): it may also be root's, and a sticky directory (like /tmp) passes,
// since others can add names to it but not rename or remove ours. Group write is no one
// else's when the group is the owner's private group (the user-private-group convention of
// login.defs' USERGROUPS_ENAB: a group with the user's own name and id, which makes a umask of
// 002 the default on Debian and Ubuntu). A symbolic link's own mode means nothing; only its
// owner counts.
func ours(uid, gid uint32, mode fs.FileMode, above bool) verdict {
	me := uint32(os.Geteuid())
	if uid != me && !(above && uid == 0) {
		return otherOwner
	}
	if mode&fs.ModeSymlink != 0 || mode.IsDir() && above && mode&fs.ModeSticky != 0 {
		return trusted
	}
	perm := mode.Perm()
	if perm&0o002 != 0 || perm&0o020 != 0 && !privateGroup(uid, gid) {
		return othersWrite
	}
	return trusted
}

// readableByOthers: for secrets, read counts as write does for everything else, and stricter:
// a secret readable by any group is refused, the owner's private group included, since that
// group's member list is not something this process can see whole (NSS).
func readableByOthers(mode fs.FileMode) bool {
	return mode.Perm()&0o044 != 0
}

// privateGroup reports whether gid is user uid's private group: the same number, a group
// named like the user, and (as OpenSSH asks of a group-writable file) no other member listed
// in /etc/group. Members from other databases cannot be listed; the name and number rule is
// the user-private-group convention those setups follow.
func privateGroup(uid, gid uint32) bool {
	if uid != gid {
		return false
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return false
	}
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10))
	if err != nil || g.Name != u.Username {
		return false
	}
	b, _ := os.ReadFile("/etc/group") // unreadable: it lists nobody
	return onlyMemberListed(b, g.Name, u.Username)
}

// onlyMemberListed reports whether the group file (/etc/group's format) lists no member of
// group other than user.
func onlyMemberListed(groupFile []byte, group, user string) bool {
	for _, line := range strings.Split(string(groupFile), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 || f[0] != group {
			continue
		}
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" && m != user {
				return false
			}
		}
	}
	return true
}

// Check is the one "is this ours and not writable by others" test, for callers that have
// stat'ed a path themselves (with Lstat, so a symbolic link is seen as one): nil when the
// file belongs to this process's effective user and nobody else can change it, otherwise an
// *Error naming what was found and the fix. above relaxes it for a directory on the way to
// what is used, or a link met there: root may own it, and a sticky directory passes.
func Check(path string, fi fs.FileInfo, above bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &Error{Path: path, Problem: "has an owner that cannot be read, so it cannot be trusted"}
	}
	uid, gid := uint32(st.Uid), uint32(st.Gid)
	what := ""
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "is a symbolic link that "
	case fi.IsDir():
		what = "is a directory that "
	}
	switch ours(uid, gid, fi.Mode(), above) {
	case otherOwner:
		return &Error{Path: path, Problem: what + "belongs to another user, so it cannot be trusted",
			Found: found(uid, fi.Mode()), Fix: "use a path that only you (and root) own"}
	case othersWrite:
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
	if uid == uint32(os.Geteuid()) {
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
