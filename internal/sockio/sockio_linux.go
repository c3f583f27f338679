package sockio

import (
	"syscall"
	"unsafe"
)

const supported = true

func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// rawWrite sends with MSG_NOSIGNAL: a peer that went away is an EPIPE error, without the
// SIGPIPE a write(2) would also raise.
func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_NOSIGNAL, 0, 0)
	return int(n), e
}

// rawWriteFile is write(2), for a pipe (sendto is for sockets only).
func rawWriteFile(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// isNonblockingPipe: only a pipe opened O_NONBLOCK is sure to be in the poller and never to
// block a raw read or write.
func isNonblockingPipe(fd uintptr) bool {
	var st syscall.Stat_t
	if syscall.Fstat(int(fd), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return false
	}
	fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return e == 0 && fl&syscall.O_NONBLOCK != 0
}
