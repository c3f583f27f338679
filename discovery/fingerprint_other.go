//go:build !linux && !darwin

package discovery

import "os"

// inode is unknown here; mtime and size carry the fingerprint alone.
func inode(os.FileInfo) string { return "" }
