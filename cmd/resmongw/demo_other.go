//go:build !linux && !darwin

package main

import "io"

// outputClosed never fires on unsupported platforms.
func outputClosed(io.Writer) <-chan struct{} { return nil }
