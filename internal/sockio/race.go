//go:build race && linux

package sockio

import "syscall"

// The race detector learns from syscall.Write and syscall.Read that what a goroutine did
// before writing happens before what the reader of those bytes does after reading them; raw
// syscalls tell it nothing, so under -race each raw write and read is paired with an empty
// one through the syscall package (a no-op for a stream socket) to say the same.
func released(fd uintptr) { _, _ = syscall.Write(int(fd), nil) }
func acquired(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }
