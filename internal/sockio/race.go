//go:build race

package sockio

import "sync/atomic"

// ioSync stands in for the race detector's view of I/O: syscall.Read and syscall.Write tell
// it that what was written before a write happens before what is done after the read that
// got it; raw syscalls do not, so a Write releases and a Read acquires this instead.
var ioSync atomic.Uint64

func released() { ioSync.Add(1) }
func acquired() { ioSync.Load() }
