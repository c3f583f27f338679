package daemon

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// Bounds of the activity record.
const (
	// activityKeep is how many records the daemon keeps in memory (and loads back at start):
	// a few days of an assistant's calls, about 200 bytes each.
	activityKeep = 2000
	// activityFileMB is the size at which the file is rotated (lumberjack counts in MB), and
	// activityBackups how many rotated files are kept: at most 3 MB on disk.
	activityFileMB  = 1
	activityBackups = 2
	// activityWriteWait bounds one write to a follower that stopped reading.
	activityWriteWait = 10 * time.Second
)

// ActivityFile is the record of calls beside the daemon's log: in its own state directory,
// never in a harness's.
func ActivityFile(logFile string) string {
	return filepath.Join(filepath.Dir(logFile), "activity.jsonl")
}

// openActivity keeps the record of calls in memory and in ActivityFile(logFile), 0600 and
// rotated by size, reloading what the previous daemon recorded. A file that cannot be used
// (not ours, a symlink, a full disk) leaves the record in memory only: it never stops the
// daemon. The returned func flushes and closes the file.
func openActivity(logFile string, log *zap.Logger) (*activity.Log, func()) {
	path := ActivityFile(logFile)
	if err := checkLogFile(path); err != nil { // the log's own checks: ours, regular, no symlink, 0600
		log.Warn("the activity file cannot be used; calls are recorded in memory only", zap.Error(err))
		return activity.New(nil, activityKeep), func() {}
	}
	lj := &lumberjack.Logger{Filename: path, MaxSize: activityFileMB, MaxBackups: activityBackups}
	sink := newLogSink(lj, 64<<10, time.Second, os.Stderr)
	a := activity.New(sink, activityKeep)
	if f, err := os.Open(path); err == nil {
		a.Load(f)
		f.Close()
	}
	return a, func() { sink.Stop(); _ = lj.Close() }
}

// serveActivity writes the records kept, then HistoryEnd, then every new record, until the
// client closes or the daemon stops (shutdown closes every connection).
func (d *daemon) serveActivity(c *net.UnixConn) {
	history, live, stop := d.activity.Follow()
	defer stop()
	bw := bufio.NewWriter(c)
	_, _ = bw.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true, Version: version.Version}))
	for _, r := range history {
		_, _ = bw.Write(activity.Line(r))
	}
	_, _ = bw.WriteString(sessionwire.HistoryEnd)
	_ = c.SetWriteDeadline(time.Now().Add(activityWriteWait))
	if bw.Flush() != nil {
		return
	}
	gone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, c); close(gone) }()
	for {
		select {
		case r, ok := <-live:
			if !ok {
				return // fell behind: the client sees EOF and says so
			}
			_ = c.SetWriteDeadline(time.Now().Add(activityWriteWait))
			if _, err := c.Write(activity.Line(r)); err != nil {
				return
			}
		case <-gone:
			return
		}
	}
}
