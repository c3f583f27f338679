//go:build linux || darwin

package sessionwire

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/resmongw/resmongw/paths"
)

// LockHolder returns the pid recorded in socket's lock file when that process is alive (and,
// on Linux, is a `serve`), else 0. It only reads: taking the lock to test it, even for an
// instant, could make a daemon starting at that moment exit with "already running". The
// daemon empties the file when it releases the lock; only a killed daemon leaves its pid, and
// the liveness check covers that. A daemon from before per-socket locks wrote its pid in the
// directory's lock file instead (paths.LegacyLockFile), which is read when the socket's names
// nobody.
func LockHolder(socket string) int {
	if pid := lockFileHolder(paths.LockFile(socket)); pid > 0 {
		return pid
	}
	return lockFileHolder(paths.LegacyLockFile(socket))
}

func lockFileHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 32 {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	if runtime.GOOS == "linux" {
		// A recycled pid is some other program: only a process running `serve` counts.
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
			serve := false
			for _, a := range strings.Split(string(cmd), "\x00") {
				serve = serve || a == "serve"
			}
			if !serve {
				return 0
			}
		}
	}
	return pid
}
