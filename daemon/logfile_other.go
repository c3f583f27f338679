//go:build !linux && !darwin

package daemon

import (
	"fmt"
	"os"
	"path/filepath"
)

// logFile on unsupported platforms: the file appended to, unchecked and never rotated.
type logFile struct{ *os.File }

func openLogFile(path string, _ int64, _ int) (*logFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	return &logFile{f}, nil
}
