package sessionwire

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The daemon's half of the start handshake closes the inherited pipe (its reader sees the
// end) and drops the variable; a descriptor that is no pipe is never closed.
func TestSignalListeningClosesOnlyThePipe(t *testing.T) {
	// Raw descriptors: the write end is the daemon's to close, and no *os.File may close its
	// number again later.
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "ready-r")
	defer r.Close()
	t.Setenv(ReadyFDEnv, strconv.Itoa(p[1]))
	SignalListening()
	if _, ok := os.LookupEnv(ReadyFDEnv); ok {
		t.Error("the variable is still set: a process the daemon starts would inherit it")
	}
	_ = r.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the starter's read: %v, want the pipe's end", err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "not-a-pipe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv(ReadyFDEnv, strconv.Itoa(int(f.Fd())))
	SignalListening()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("a descriptor that is no pipe was closed: %v", err)
	}
}
