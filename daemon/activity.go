package daemon

import (
	"bufio"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// Bounds of the activity record.
const (
	// activityKeep is how many records the daemon keeps in memory (and loads back at start):
	// a few days of an assistant's calls, about 200 bytes each.
	activityKeep = 2000
	// activityMaxSize is the size at which the file is rotated, and activityBackups how many
	// rotated files are kept: at most 3 MiB on disk.
	activityMaxSize = 1 << 20
	activityBackups = 2
	// activityWriteWait bounds one write to a follower that stopped reading.
	activityWriteWait = 10 * time.Second
)

// ActivityFile is the record of calls beside the daemon's log and named after it (mcp.log:
// mcp.activity.jsonl), so two daemons whose sockets share a directory keep one each.
func ActivityFile(logFile string) string {
	return strings.TrimSuffix(logFile, ".log") + ".activity.jsonl"
}

// openActivity keeps the record of calls in memory and in the file at path, opened and
// rotated as the log is (logfile_unix.go: a checked directory, O_NOFOLLOW, 0600), reloading
// what the previous daemon recorded. A file that cannot be used (not ours, a symlink, a full
// disk) leaves the record in memory only: it never stops the daemon. The returned func
// flushes and closes the file.
func openActivity(path string, log *zap.Logger) (*activity.Log, func()) {
	lf, err := openLogFile(path, activityMaxSize, activityBackups)
	if err != nil {
		log.Warn("the activity file cannot be used; calls are recorded in memory only", zap.Error(err))
		return activity.New(nil, activityKeep), func() {}
	}
	sink := newLogSink(lf, 64<<10, time.Second, os.Stderr)
	a := activity.New(sink, activityKeep)
	if f, err := os.Open(path); err == nil { // lf checked it: ours, regular, no symlink
		a.Load(f)
		f.Close()
	}
	return a, func() { sink.Stop(); _ = lf.Close() }
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
