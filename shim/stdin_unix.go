//go:build linux || darwin

package shim

import (
	"os"
	"runtime"
	"syscall"
)

// polledStdin is our stdin as a file the runtime's poller reads: a new open file description
// of the same pipe (through /proc/self/fd/0), non-blocking. A read on the inherited blocking
// descriptor parks a thread in read(2), and with GOMAXPROCS=1 that thread holds the only P
// until sysmon takes it back, which delays the daemon's answer behind it; with both sides on
// the poller, one thread waits in epoll for whichever is ready. The harness's description
// keeps its flags. Anything but a pipe (a terminal, a file, a socket) is used as it is, and so
// is stdin on macOS, which has no /proc/self/fd to open the pipe's read end anew.
func polledStdin() *os.File {
	var st syscall.Stat_t
	if runtime.GOOS != "linux" || syscall.Fstat(0, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return os.Stdin
	}
	fd, err := syscall.Open("/proc/self/fd/0", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return os.Stdin
	}
	return os.NewFile(uintptr(fd), "/dev/stdin")
}
