package discovery

import "path/filepath"

// defaultStateDir is resmon's macOS state directory.
func defaultStateDir(t Target) string {
	h := t.home()
	if h == "" {
		return ""
	}
	return filepath.Join(h, "Library", "Application Support", "resmon")
}
