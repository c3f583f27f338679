//go:build linux || darwin

package trustfile

import (
	"os"
	"path/filepath"
)

// OpenDir checks dir as CheckDir does and returns it open, so the caller creates and opens
// its own files relative to exactly the directory that was checked (openat), never by a
// name that could be made to point elsewhere between the check and the open.
func OpenDir(dir string) (*os.File, error) {
	fd, err := openDir(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}
