package daemon

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/trustfile"
)

// Issue 10.6: --log-file is never followed through a symlink (it used to chmod and append to
// the link's target), and a log file of another user is refused.
func TestLogFileSymlinkAndForeignOwnerRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "resmongw.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, _, err := newLoggerTo(link, false, &testkit.SyncBuffer{})
	var te *trustfile.Error
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("symlinked log: %v, want refused", err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the link's target was chmodded to %v", fi.Mode())
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Fatalf("the link's target was written: %q", b)
	}

	if os.Geteuid() == 0 {
		foreign := filepath.Join(dir, "foreign.log")
		if err := os.WriteFile(foreign, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(foreign, testkit.OtherUID, testkit.OtherUID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := newLoggerTo(foreign, false, &testkit.SyncBuffer{}); !errors.As(err, &te) || !strings.Contains(err.Error(), "uid 65534") {
			t.Fatalf("log of another user: %v, want refused", err)
		}
	}
}

// Issue 10.7 (log): on a full disk the log drops entries and says so on stderr a bounded
// number of times (not a line per entry); once space is freed, logging resumes by itself and
// the log says how many entries were lost.
func TestLogResumesAfterDiskFull(t *testing.T) {
	testkit.NeedRoot(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	path := filepath.Join(mnt, "log", "resmongw.log")
	noise := &testkit.SyncBuffer{}
	log, closeLog, err := newLoggerTo(path, false, noise)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	log.Info("before the disk filled")
	_ = log.Sync()

	// Fill the file system to the last block.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	const entries = 2000
	for i := 0; i < entries; i++ {
		log.Info("while the disk is full", zap.Int("i", i))
		if i%100 == 0 {
			_ = log.Sync()
		}
	}
	_ = log.Sync()
	if n := strings.Count(noise.String(), "\n"); n == 0 || n > 3 {
		t.Fatalf("%d stderr lines for %d entries on a full disk, want 1–3:\n%s", n, entries, noise.String())
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	log.Info("after space was freed")
	_ = log.Sync()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"before the disk filled", "after space was freed", "log entries were lost"} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("log lacks %q after space was freed:\n%.2000s", want, b)
		}
	}
	if !strings.Contains(noise.String(), "can be written again") {
		t.Fatalf("stderr does not say logging resumed:\n%s", noise.String())
	}
}

// An entry reaches the file by itself within the flush period, a sink with nothing buffered
// has no flush pending (an idle daemon is not woken for its log), and after Stop entries are
// written at once.
func TestLogSinkFlushesWithinThePeriodAndSleepsWhenEmpty(t *testing.T) {
	var file testkit.SyncBuffer
	s := newLogSink(&file, 1<<20, 10*time.Millisecond, io.Discard)
	defer s.Stop()
	pending := func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.armed }
	if pending() {
		t.Fatal("a new sink has a flush pending")
	}
	_, _ = s.Write([]byte("one\n"))
	testkit.WaitFor(t, 10*time.Second, func() bool { return file.String() == "one\n" }, "the entry to reach the file")
	if pending() {
		t.Fatal("a flush is pending with nothing buffered")
	}
	_, _ = s.Write([]byte("two\n"))
	s.Stop()
	_, _ = s.Write([]byte("three\n"))
	if got := file.String(); got != "one\ntwo\nthree\n" {
		t.Fatalf("file %q", got)
	}
}
