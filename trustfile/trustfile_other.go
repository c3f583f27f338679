//go:build !linux && !darwin

package trustfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile reads at most max bytes of a regular file. Ownership and modes are not checked
// here: only Linux and macOS are supported platforms, and this stub only keeps the tree
// building elsewhere.
func ReadFile(path string, _ Kind, max int) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{Path: path, Problem: "is not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("is larger than %d bytes", max)
	}
	return b, nil
}

// CheckDir checks that dir is a directory.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errNotDir
	}
	return nil
}

var errNotDir = errors.New("is not a directory")

// ErrNotDir reports whether err says the path is not a directory.
func ErrNotDir(err error) bool { return errors.Is(err, errNotDir) }

// CheckHolder checks that dir is a directory.
func CheckHolder(dir string) error { return CheckDir(dir) }

// Check trusts everything here (see ReadFile).
func Check(string, fs.FileInfo, bool) error { return nil }

// ResolveForWrite only makes path absolute here (see ReadFile).
func ResolveForWrite(path string) (string, int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, err
	}
	if _, err := os.Stat(abs); err != nil {
		return abs, 1, nil
	}
	return abs, 0, nil
}
