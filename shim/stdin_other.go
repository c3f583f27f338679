//go:build !linux

package shim

import "os"

// polledStdin is os.Stdin off Linux, which has no /proc/self/fd to open a pipe's read end
// anew (see stdin_linux.go).
func polledStdin() *os.File { return os.Stdin }
