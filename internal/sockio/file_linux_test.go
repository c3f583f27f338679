package sockio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A pipe in the poller is read and written raw: bytes in order, io.EOF when the writer
// closes, EPIPE (not a signal's death) when the reader has gone, errors shaped as os's.
func TestPolledPipesAreReadAndWrittenRaw(t *testing.T) {
	r, w, err := os.Pipe() // non-blocking, in the poller
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rc, wc := NewFile(r), NewFile(w)
	if rc == nil || wc == nil {
		t.Fatal("a polled pipe was declined")
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: more than a pipe holds
	go func() {
		if _, err := wc.Write(want); err != nil {
			t.Error(err)
		}
		_ = w.Close()
	}()
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d of %d bytes: %v", len(got), len(want), err)
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	_ = r2.Close()
	_, err = NewFile(w2).Write([]byte("x"))
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a pipe nobody reads: %v (%T)", err, err)
	}
}

// A descriptor that may block (a blocking pipe, a regular file) is declined: read raw it
// would hold the thread, and with one P the process, until data came.
func TestBlockingDescriptorsAreDeclined(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	br, bw := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer br.Close()
	defer bw.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, f := range []*os.File{br, bw, f} {
		if NewFile(f) != nil {
			t.Errorf("%s accepted", f.Name())
		}
	}
}
