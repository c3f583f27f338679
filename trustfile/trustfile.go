// Package trustfile applies the one rule of whether a file is the user's own and nobody else
// can change it (package ours; OpenSSH StrictModes-style) to the files the daemon reads
// (resmon's state directory, port and token files), the directory of its log, and the paths
// config writers replace, with messages that name what was found and the fix.
package trustfile

import (
	"fmt"
	"io/fs"
	"os/user"
	"strconv"
	"strings"
)

// Kind says how private a file must be.
type Kind int

const (
	// Public files (the port file) may be readable by others, but never writable by them:
	// whoever can write the port file chooses where the token is sent.
	Public Kind = iota
	// Secret files (token files) must be neither readable nor writable by anyone else.
	Secret
)

// Error is a refusal: a file or directory exists but is not trusted. It names the path,
// what was found and the command that fixes it, so a person can act on it at once.
type Error struct {
	Path    string
	Problem string // "is writable by other users", "is a symbolic link", …
	Found   string // "owner nobody (uid 65534), mode 0777"
	Fix     string // "run: chmod 700 /x"
}

func (e *Error) Error() string {
	s := e.Path + " " + e.Problem
	if e.Found != "" {
		s += " (" + e.Found + ")"
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// owner names a uid for a message: "nobody (uid 65534)", or "uid 65534" when it has no name.
func owner(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

func found(uid uint32, mode fs.FileMode) string {
	return fmt.Sprintf("owner %s, mode %04o", owner(uid), uint32(mode.Perm())|stickyBit(mode))
}

func stickyBit(mode fs.FileMode) uint32 {
	if mode&fs.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

// shellQuote quotes a path for a fix a person pastes into a shell.
func shellQuote(p string) string {
	for _, r := range p {
		if !(r == '/' || r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return p
}
