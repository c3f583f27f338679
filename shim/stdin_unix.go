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
func polledStdin() *os.File { return polled(0, syscall.O_RDONLY, os.Stdin, "/dev/stdin") }

// polledStdout is our stdout made the same way, for the same reason: a write to the
// inherited blocking pipe is a blocking system call, and one that takes a while (the harness
// slow to read) has the runtime start another thread to run the rest, a thread (and its
// stacks) the process then keeps for its whole life.
func polledStdout() *os.File { return polled(1, syscall.O_WRONLY, os.Stdout, "/dev/stdout") }

func polled(fd, mode int, inherited *os.File, name string) *os.File {
	var st syscall.Stat_t
	if runtime.GOOS != "linux" || syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return inherited
	}
	nfd, err := syscall.Open("/proc/self/fd/"+string(rune('0'+fd)), mode|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return inherited
	}
	return os.NewFile(uintptr(nfd), name)
}
