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
	stop       chan struct{}
	done       chan struct{}
	stopOnce   sync.Once
}

// noiseEvery bounds how often a failing log file is reported while it keeps failing.
const noiseEvery = time.Minute

func newLogSink(w io.Writer, size int, every time.Duration, noise io.Writer) *logSink {
	s := &logSink{w: w, noise: noise, size: size, buf: make([]byte, 0, size), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = s.Sync()
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if len(s.buf) >= s.size {
		s.flushLocked()
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

// Stop ends the periodic flush and flushes what is left.
func (s *logSink) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	_ = s.Sync()
}

func (s *logSink) flushLocked() {
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
