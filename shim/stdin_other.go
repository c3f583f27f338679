//go:build !linux && !darwin

package shim

import "os"

// polledStdin is os.Stdin on platforms resmongw does not support (see stdin_unix.go).
func polledStdin() *os.File { return os.Stdin }
