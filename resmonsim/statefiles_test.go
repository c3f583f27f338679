//go:build unix

package resmonsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The app recreates its state directory on start; so must a restart of the simulator after
// a test (or a person) deleted it.
func TestRestartRecreatesDeletedStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	sim, err := Start(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := sim.Restart(RestartOptions{}); err != nil {
		t.Fatalf("restart after the state dir was deleted: %v", err)
	}
	tok, err := os.ReadFile(sim.TokenFile())
	if err != nil || string(tok) != sim.Token() {
		t.Fatalf("token file after restart: %q, %v", tok, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("recreated state dir: %v %v", fi, err)
	}
}

// With DaemonLock the simulator writes daemon.lock and holds an exclusive flock on it, as the
// app's daemon does; a crash releases the lock but leaves the file; a clean stop removes it.
func TestDaemonLockIsHeldAndReleased(t *testing.T) {
	dir := t.TempDir()
	sim, err := Start(Options{StateDir: dir, DaemonLock: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "daemon.lock")
	var lock struct {
		PID     int    `json:"pid"`
		Port    int    `json:"port"`
		Version string `json:"version"`
		Started string `json:"started_at"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &lock) != nil || lock.Port != sim.Port() || lock.PID != os.Getpid() || lock.Version == "" || lock.Started == "" {
		t.Fatalf("daemon.lock = %s (%v)", b, err)
	}
	tryLock := func() error {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err := tryLock(); err == nil {
		t.Fatal("daemon.lock is not flocked while the simulator runs")
	}
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a crash must leave daemon.lock behind: %v", err)
	}
	if err := tryLock(); err != nil {
		t.Fatalf("a crashed simulator still holds the flock: %v", err)
	}
	if err := sim.Restart(RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := sim.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a clean stop must remove daemon.lock: %v", err)
	}
}
