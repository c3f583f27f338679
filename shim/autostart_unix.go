//go:build linux || darwin

package shim

import (
	"os"
	"os/exec"
	"syscall"
)

// startDaemon launches `resmongw serve --socket path` from our own binary, detached: a new
// session (so the harness's signals and terminal don't reach it) with stdio on /dev/null (the
// daemon logs to its file). It is not a child we wait on, but a goroutine reaps it if it exits
// while we live (e.g. it lost the single-instance race), so it never lingers as a zombie; the
// channel reports that exit.
func startDaemon(path string) (<-chan error, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "serve", "--socket", path)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}
