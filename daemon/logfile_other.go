//go:build !linux && !darwin

package daemon

import (
	"fmt"
	"os"
)

// checkLogFile creates the log file 0600 if needed; ownership is not checked on
// unsupported platforms.
func checkLogFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	return f.Close()
}
