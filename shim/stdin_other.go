//go:build !linux && !darwin

package shim

import "os"

// polledStdin is os.Stdin on platforms resmongw does not support (see stdin_unix.go).
func polledStdin() *os.File { return os.Stdin }

// polledStdout is os.Stdout on platforms resmongw does not support (see stdin_unix.go).
func polledStdout() *os.File { return os.Stdout }
