// Package ours is the one rule of whether a file belongs to this user and nobody else can
// change it; stdlib only, so the shim applies the same rule as the daemon.
package ours

import (
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// Verdict is what the rule finds.
type Verdict int

const (
	Trusted      Verdict = iota
	OwnerUnknown         // the file's owner cannot be read
	OtherOwner           // it belongs to another user (or, where root may not own it, to root)
	OthersWrite          // someone other than its owner can change it
)

// Judge is the rule for a file with owner uid, group gid and mode: it belongs to this
// process's effective user and nobody else can change it. above is for a directory on the way
// to what is used (or a symbolic link met there): it may also be root's, and a sticky
// directory (like /tmp) passes, since others can add names to it but not rename or remove
// ours. Group write is no one else's when the group is the owner's private group (the
// user-private-group convention of login.defs' USERGROUPS_ENAB: a group with the user's own
// name and id, which makes a umask of 002 the default on Debian and Ubuntu). A symbolic
// link's own mode means nothing; only its owner counts.
func Judge(uid, gid uint32, mode fs.FileMode, above bool) Verdict {
	if !Mine(uid) && !(above && uid == 0) {
		return OtherOwner
	}
	if mode&fs.ModeSymlink != 0 || mode.IsDir() && above && mode&fs.ModeSticky != 0 {
		return Trusted
	}
	perm := mode.Perm()
	if perm&0o002 != 0 || perm&0o020 != 0 && !privateGroup(uid, gid) {
		return OthersWrite
	}
	return Trusted
}

// Mine reports whether uid is this process's effective user, the owner the rule asks for.
func Mine(uid uint32) bool { return uid == uint32(os.Geteuid()) }

// ReadableByOthers is the rule for secrets, where read counts as write does for everything
// else, and stricter: a secret readable by any group is refused, the owner's private group
// included, since that group's member list is not something this process can see whole (NSS).
func ReadableByOthers(mode fs.FileMode) bool {
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
