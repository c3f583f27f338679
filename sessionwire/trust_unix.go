//go:build linux || darwin

package sessionwire

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/ours"
)

// DirFault is what the socket directory's check (CheckSocketDir) finds wrong with a directory.
type DirFault int

const (
	DirOK               DirFault = iota
	DirNotReal                   // a symlink, or not a directory
	DirOwnerUnknown              // its owner cannot be read
	DirOtherOwner                // another user owns it
	DirWritableByOthers          // writable by another user (a group not the owner's private one, or all)
)

// CheckSocketDir is the socket directory's check, applied by the daemon before it listens
// there (daemon.privateDir) and by every client before it writes a byte there
// (checkSocketDir): a real directory (not a symlink), passing the one rule of package ours
// (owned by us, writable by nobody else; the owner's private group may write). Otherwise
// another user could have put the socket there, or could replace ours. One check, so a
// genuine daemon's socket always passes the clients'. fi is dir's, for messages; err is
// Lstat's (the fault is then DirOK and means nothing).
func CheckSocketDir(dir string) (DirFault, os.FileInfo, error) {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return DirOK, nil, err
	case fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir():
		return DirNotReal, fi, nil
	}
	switch ours.File(fi, false) {
	case ours.OwnerUnknown:
		return DirOwnerUnknown, fi, nil
	case ours.OtherOwner:
		return DirOtherOwner, fi, nil
	case ours.OthersWrite:
		return DirWritableByOthers, fi, nil
	}
	return DirOK, fi, nil
}

// checkSocketDir refuses a socket whose directory fails CheckSocketDir. A missing directory
// is no refusal: nobody serves there (the shim's autostart creates it privately).
func checkSocketDir(socket string) error {
	dir := filepath.Dir(socket)
	fault, fi, err := CheckSocketDir(dir)
	if err != nil {
		return err // ENOENT reads as "daemon down" to the caller
	}
	switch fault {
	case DirNotReal:
		return refusef("refusing the socket %s: its directory %s is not a real directory (a symlink or a file); nothing was sent", socket, dir)
	case DirOwnerUnknown:
		return refusef("refusing the socket %s: cannot read the owner of %s; nothing was sent", socket, dir)
	case DirOtherOwner:
		uid, _, _ := ours.Owner(fi)
		return refusef("refusing the socket %s: its directory %s belongs to uid %d, not to you (uid %d), so another user may run it; nothing was sent (%s)", socket, dir, uid, os.Geteuid(), PrivateDirFix(dir, fi, "RESMONGW_SOCKET"))
	case DirWritableByOthers:
		return refusef("refusing the socket %s: its directory %s is writable by others (mode %04o), so another user may have put it there; nothing was sent (%s)", socket, dir, fi.Mode().Perm()|modeSticky(fi), PrivateDirFix(dir, fi, "RESMONGW_SOCKET"))
	}
	return nil
}

// PrivateDirFix is the advice for a socket directory that is not ours alone: a directory of
// the socket's own, named by how the socket was chosen (a flag or RESMONGW_SOCKET), or the
// default, which is private. It never tells anyone to chmod a directory others may share
// (/tmp, /, a team's directory: a tighter mode would lock them out) or one of another user;
// a directory of ours that is not sticky gets a chmod only for when nobody else uses it. A
// directory of the socket's own inside dir is offered only when dir is sticky: elsewhere
// others could rename it away.
func PrivateDirFix(dir string, fi os.FileInfo, how string) string {
	uid, _, ok := ours.Owner(fi)
	mine := ok && ours.Mine(uid)
	var fix string
	if fi.Mode()&os.ModeSticky != 0 {
		own := filepath.Join(dir, "resmongw-"+strconv.Itoa(os.Getuid()))
		fix = fmt.Sprintf("put the socket in a directory of its own: mkdir -m 700 %s, then set %s to %s",
			quote(own), how, quote(filepath.Join(own, "resmongw.sock")))
	} else {
		fix = fmt.Sprintf("set %s to a socket in a directory only you can write", how)
	}
	fix += fmt.Sprintf(", or leave %s unset (the default socket's directory is private)", how)
	if mine && fi.Mode()&os.ModeSticky == 0 {
		fix += fmt.Sprintf("; or, if nobody else uses %s: chmod 700 %s", quote(dir), quote(dir))
	}
	return fix
}

// quote quotes a path for a shell when it needs it.
func quote(p string) string {
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// modeSticky adds the sticky bit to the printed mode (1777 is how people know /tmp).
func modeSticky(fi os.FileInfo) os.FileMode {
	if fi.Mode()&os.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

// checkPeer refuses a daemon that runs as another user: the kernel's record of who listens
// on the socket (PeerCred), read before we write a single byte.
func checkPeer(c *net.UnixConn, socket string) error {
	uid, _, err := PeerCred(c)
	if err != nil {
		return refusef("refusing the socket %s: cannot read its peer's credentials (%v); nothing was sent", socket, err)
	}
	if me := os.Getuid(); uid != me {
		return refusef("refusing the socket %s: it is served by uid %d, not by you (uid %d); nothing was sent", socket, uid, me)
	}
	return nil
}

// peerCredFrom runs read on the connection's descriptor; the platforms differ only in the
// socket options read reads.
func peerCredFrom(c *net.UnixConn, read func(fd int) (uid, pid int, err error)) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	var rerr error
	if err := rc.Control(func(fd uintptr) { uid, pid, rerr = read(int(fd)) }); err != nil {
		return -1, 0, err
	}
	if rerr != nil {
		return -1, 0, rerr
	}
	return uid, pid, nil
}
