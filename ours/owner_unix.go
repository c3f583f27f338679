//go:build linux || darwin

package ours

import (
	"io/fs"
	"syscall"
)

// Owner is fi's owner and group, read from what Stat or Lstat found; ok is false when fi
// does not carry them.
func Owner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint32(st.Uid), uint32(st.Gid), true
}

// File is Judge for a file already stat'ed (with Lstat, so a symbolic link is seen as one).
func File(fi fs.FileInfo, above bool) Verdict {
	uid, gid, ok := Owner(fi)
	if !ok {
		return OwnerUnknown
	}
	return Judge(uid, gid, fi.Mode(), above)
}
