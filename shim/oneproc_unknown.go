//go:build !linux

package shim

// OneProc does nothing off Linux: there is no /proc/self/exe to run ourselves again with, and
// the shim's memory is measured on Linux (see oneproc_linux.go).
func OneProc() {}
