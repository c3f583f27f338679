package sockio

import "syscall"

// macOS makes its syscalls through libc, so the raw path is Linux's only: New declines here
// and callers use the net.Conn itself.
const supported = false

func rawRead(uintptr, []byte) (int, syscall.Errno)  { return 0, syscall.ENOSYS }
func rawWrite(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }

func rawWriteFile(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }
func isNonblockingPipe(uintptr) bool                    { return false }
