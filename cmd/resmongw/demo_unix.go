//go:build linux || darwin

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// outputClosed is closed when w, a pipe, socket or terminal, loses its reader (poll reports
// POLLERR or POLLHUP, asked for nothing else): the demo then ends as on Ctrl-C. A regular
// file or /dev/null never reports either, and a w that is not a file is never watched.
func outputClosed(w io.Writer) <-chan struct{} {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	closed := make(chan struct{})
	fd := int(f.Fd())
	go func() {
		for {
			fds := []unix.PollFd{{Fd: int32(fd)}}
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR || err == nil && n == 0 {
				continue
			}
			if err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				close(closed)
			}
			return
		}
	}()
	return closed
}
