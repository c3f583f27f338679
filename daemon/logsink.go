package daemon

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// logSink buffers log entries for the file and, unlike zap's BufferedWriteSyncer (whose
// bufio.Writer keeps its first error forever), survives a failing disk: a flush that fails
// drops what it held, counts the entries lost and tries again with the next flush, so logging
// resumes by itself once space is freed. It never returns an error to zap, which would print
// a line per entry; instead it says so on noise once when writes start failing, at most once
// a minute while they keep failing, and once when they work again.
type logSink struct {
	mu         sync.Mutex
	w          io.Writer
	noise      io.Writer
	buf        []byte
	size       int
	failing    bool
	dropped    int // entries lost since writes began failing
	lastReport time.Time
	every      time.Duration
	// flush is armed by the first entry into an empty buffer and fires every after it, so
	// an idle daemon is not woken once a second for nothing (a ticker did that); armed says
	// it is pending. stopped: after Stop, entries are written at once.
	flush   *time.Timer
	armed   bool
	stopped bool
}

// noiseEvery bounds how often a failing log file is reported while it keeps failing.
const noiseEvery = time.Minute

func newLogSink(w io.Writer, size int, every time.Duration, noise io.Writer) *logSink {
	s := &logSink{w: w, noise: noise, size: size, buf: make([]byte, 0, size), every: every}
	s.flush = time.AfterFunc(time.Hour, func() { _ = s.Sync() })
	s.flush.Stop()
	return s
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	switch {
	case len(s.buf) >= s.size || s.stopped:
		s.flushLocked()
	case !s.armed:
		s.armed = true
		s.flush.Reset(s.every)
	}
	return len(p), nil
}

// Sync flushes; it never fails (see logSink).
func (s *logSink) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
	return nil
}

// Stop flushes what is left; entries written after it go to the file at once.
func (s *logSink) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.flush.Stop()
	s.flushLocked()
}

func (s *logSink) flushLocked() {
	if s.armed {
		s.armed = false
		s.flush.Stop()
	}
	if len(s.buf) == 0 {
		return
	}
	if s.failing && s.dropped > 0 {
		// Say in the log itself, before anything else, that entries are missing.
		note := fmt.Sprintf(`{"level":"warn","ts":%q,"msg":"log entries were lost while the log file could not be written","lost":%d}`+"\n",
			time.Now().Format("2006-01-02T15:04:05.000Z0700"), s.dropped)
		s.buf = append([]byte(note), s.buf...)
	}
	_, err := s.w.Write(s.buf)
	entries := bytes.Count(s.buf, []byte{'\n'})
	s.buf = s.buf[:0]
	now := time.Now()
	if err != nil {
		if !s.failing || now.Sub(s.lastReport) >= noiseEvery {
			fmt.Fprintf(s.noise, "resmongw: the log file cannot be written (%v); entries are dropped until it can (%d so far)\n",
				err, s.dropped+entries)
			s.lastReport = now
		}
		if !s.failing {
			s.failing = true
			s.dropped = 0
		}
		s.dropped += entries
		return
	}
	if s.failing {
		fmt.Fprintf(s.noise, "resmongw: the log file can be written again; %d entries were lost\n", s.dropped)
		s.failing, s.dropped = false, 0
	}
}
