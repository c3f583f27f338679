//go:build linux || darwin

package discovery

import (
	"os"
	"strconv"
	"syscall"
)

// inode tells a file replaced by rename from the one before it, whatever the mtimes say.
func inode(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Ino), 36)
	}
	return ""
}
