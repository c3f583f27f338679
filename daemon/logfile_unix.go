//go:build linux || darwin

package daemon

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/resmongw/resmongw/trustfile"
)

// checkLogFile creates or opens path without following a symlink and insists on a regular
// file of our own, then makes it 0600.
func checkLogFile(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: "is a symbolic link, which is never followed",
			Fix: "remove it, or pass --log-file a path of your own"})
	}
	if err != nil {
		return fmt.Errorf("log file %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("log file %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: "is not a regular file", Fix: "remove it, or pass --log-file another path"})
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("log file: %w", &trustfile.Error{Path: path, Problem: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", st.Uid, os.Geteuid()),
			Fix: "remove it, or pass --log-file a path of your own"})
	}
	// lumberjack creates new files 0600 but keeps an existing file's mode.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return fmt.Errorf("log file %s: %w", path, err)
	}
	return nil
}
