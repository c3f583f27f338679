package procexit

import (
	"os"
	"syscall"
	"unsafe"
)

// sysPidfdOpen is pidfd_open(2)'s number, the same on every Linux architecture (Linux 5.3;
// the stdlib's syscall package predates it).
const sysPidfdOpen = 434

// Watch returns a channel closed when process pid exits (and a stop that ends the watch,
// closing the channel too), or nil when the kernel cannot say (no pidfd_open: before Linux
// 5.3, or refused by a sandbox; no such process), in which case the caller polls. still is
// checked once the descriptor is open: a pid names the process the caller means only as long
// as that process lives (the shim's parent: while we have not been reparented), so one that
// died before the open (its number possibly reused since) is reported at once rather than
// watched. Why: a check on a timer wakes an idle process, and with it a sleeping CPU, for
// nothing; a pidfd is readable once the process is gone, and the poller waits on it like on
// any descriptor.
func Watch(pid int, still func() bool) (gone <-chan struct{}, stop func()) {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return nil, func() {}
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		_ = syscall.Close(int(fd))
		return nil, func() {}
	}
	exited := make(chan struct{})
	if !still() {
		_ = syscall.Close(int(fd))
		close(exited)
		return exited, func() {}
	}
	f := os.NewFile(fd, "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, func() {}
	}
	go func() {
		defer close(exited)
		// Read calls this until it reports true, waiting on the poller in between. An
		// error (the descriptor could not join the poller) ends the watch too: the caller
		// finds its parent still there and polls instead.
		_ = rc.Read(func(fd uintptr) bool { return pidfdReadable(fd) })
	}()
	// Closing the file wakes the Read above with an error; it waits for the callback.
	return exited, func() { _ = f.Close() }
}

// pidfdReadable asks, without waiting, whether the pidfd reports its process gone.
func pidfdReadable(fd uintptr) bool {
	pfd := struct {
		fd             int32
		events, revent int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	var zero syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return errno == 0 && n > 0
}
