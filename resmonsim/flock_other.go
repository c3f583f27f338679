//go:build !linux && !darwin

package resmonsim

import "os"

// lockFile opens path; there is no flock here, so the file alone stands for the lock.
func lockFile(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0o600) }
