// Package sockio reads and writes a socket's non-blocking descriptor without the Go
// scheduler's blocking-syscall bookkeeping, where that bookkeeping costs more than the I/O.
package sockio
