package testkit

import (
	"os"
	"syscall"
	"testing"
)

// Main is a package's TestMain when it needs nothing else: it runs the tests and exits
// through Exit.
func Main(m *testing.M) { Exit(m.Run()) }

// Exit ends a test binary with code. Under -race, os.Exit(0) runs the race runtime's
// finaliser, which sleeps atexit_sleep_ms (a second unless GORACE says otherwise) so that
// goroutines still running can report races; GORACE is read before TestMain runs, so a
// test binary cannot lower it for itself. That second was paid by each of the suite's
// packages, most of whose tests take less. Nothing is lost by skipping it: the testing
// package has already failed any test during which a race was reported, and failed the
// run for one reported between tests ("race detected outside of test execution"), so the
// code carries every race seen. Under -cover the exit hooks that write the profile run, so
// there it exits through os.Exit.
func Exit(code int) {
	if Race && testing.CoverMode() == "" {
		syscall.Exit(code)
	}
	os.Exit(code)
}
