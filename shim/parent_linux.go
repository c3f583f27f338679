package shim

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// parentArgv0 names the harness that launched us (the base name of its argv[0]), for status.
func parentArgv0(ppid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return filepath.Base(string(b))
}
