//go:build !linux && !darwin

package trustfile

import "os"

// OpenDir opens dir after CheckDir; nothing more is checked on unsupported platforms.
func OpenDir(dir string) (*os.File, error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	return os.Open(dir)
}
