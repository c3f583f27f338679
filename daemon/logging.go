package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/resmongw/resmongw/scrub"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger logs JSON to a rotated, buffered file (mode 0600) and, when asked, to stderr
// (unbuffered); never to stdout. Sampling is off (a quiet daemon must not drop the one line that explains a
// failure). Every entry is scrubbed twice: fields by scrubCore, bytes by scrubWriter.
func newLogger(path string, stderr bool) (*zap.Logger, func(), error) {
	return newLoggerTo(path, stderr, os.Stderr)
}

// newLoggerTo is newLogger with the writer that hears about a failing log file (noise).
func newLoggerTo(path string, stderr bool, noise io.Writer) (*zap.Logger, func(), error) {
	lf, err := openLogFile(path, logMaxSize, logBackups)
	if err != nil {
		return nil, nil, err
	}
	// The file sink is buffered: a write syscall per tool call was a visible part of a call's
	// cost. Entries reach the file within a second, at once when 256 KiB pile up, and on Stop
	// (shutdown); only a SIGKILL can lose the last second of reads. A flush never splits an entry, so
	// scrubbing whole flushes is as safe as scrubbing each entry.
	//
	// Two kinds of entry are not left in the buffer: warnings and errors, and the record of
	// a write call (a "write" field that is true). Each is written to the file at once, with
	// what was buffered before it, so the line that explains a failure and the record of
	// every write to resmon survive even a SIGKILL. Reads, nearly every call, stay buffered.
	file := newLogSink(scrubWriter{lf}, 256<<10, time.Second, noise)
	cores := []zapcore.Core{flushCore{Core: zapcore.NewCore(jsonEncoder(), file, zap.InfoLevel), flush: file.Sync}}
	if stderr {
		cores = append(cores, stderrCore())
	}
	log := logger(cores...)
	return log, func() { _ = log.Sync(); file.Stop(); _ = lf.Close() }, nil
}

// stderrLogger is the daemon's log when its file cannot be opened: the daemon serves
// regardless, and its entries go to stderr, which the service manager keeps (the journal,
// launchd's log); status says where the log went and why.
func stderrLogger() (*zap.Logger, func()) {
	log := logger(stderrCore())
	return log, func() { _ = log.Sync() }
}

func jsonEncoder() zapcore.Encoder {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zapcore.NewJSONEncoder(enc)
}

func stderrCore() zapcore.Core {
	return zapcore.NewCore(jsonEncoder(), zapcore.Lock(zapcore.AddSync(scrubWriter{os.Stderr})), zap.InfoLevel)
}

// logger scrubs every entry before cores see it. zap reports a failed write on ErrorOutput
// once per entry; the file's sink never fails a write (it reports itself, bounded), so this
// only catches a failing stderr, and quietly.
func logger(cores ...zapcore.Core) *zap.Logger {
	return zap.New(scrubCore{zapcore.NewTee(cores...)}, zap.ErrorOutput(zapcore.AddSync(io.Discard)))
}

// flushCore writes through its core and flushes the sink at once after the entries that
// must not wait in the buffer (see newLoggerTo): warn and above, and a write call's record.
type flushCore struct {
	zapcore.Core
	flush func() error
	write bool // a "write": true field came with With
}

func (c flushCore) With(fs []zapcore.Field) zapcore.Core {
	return flushCore{Core: c.Core.With(fs), flush: c.flush, write: c.write || hasWriteField(fs)}
}

func (c flushCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c flushCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	err := c.Core.Write(e, fs)
	if e.Level >= zapcore.WarnLevel || c.write || hasWriteField(fs) {
		_ = c.flush()
	}
	return err
}

// hasWriteField reports a boolean "write" field that is true: the call log's mark of a
// write call (recordCall).
func hasWriteField(fs []zapcore.Field) bool {
	for _, f := range fs {
		if f.Key == "write" && f.Type == zapcore.BoolType && f.Integer == 1 {
			return true
		}
	}
	return false
}

// scrubWriter removes registered tokens from encoded log bytes: the last line of defence,
// whatever field type carried the text.
type scrubWriter struct{ w io.Writer }

func (s scrubWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(scrub.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scrubCore scrubs the message and the string-like fields of every entry.
type scrubCore struct{ zapcore.Core }

func (c scrubCore) With(fs []zapcore.Field) zapcore.Core {
	return scrubCore{c.Core.With(scrubFields(fs))}
}

func (c scrubCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c scrubCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	e.Message = scrub.String(e.Message)
	return c.Core.Write(e, scrubFields(fs))
}

// scrubFields returns fs with its string-like fields scrubbed; fs itself when none changes
// (the call log line's fields, every call), so a clean entry costs no copy.
func scrubFields(fs []zapcore.Field) []zapcore.Field {
	var out []zapcore.Field
	for i, f := range fs {
		g, changed := scrubField(f)
		if changed && out == nil {
			out = make([]zapcore.Field, len(fs))
			copy(out, fs)
		}
		if out != nil {
			out[i] = g
		}
	}
	if out == nil {
		return fs
	}
	return out
}

// scrubField scrubs one field; changed says it is no longer f.
func scrubField(f zapcore.Field) (zapcore.Field, bool) {
	switch f.Type {
	case zapcore.StringType:
		if s := scrub.String(f.String); s != f.String {
			f.String = s
			return f, true
		}
	case zapcore.ErrorType:
		if err, ok := f.Interface.(error); ok && err != nil {
			return zap.String(f.Key, scrub.String(err.Error())), true
		}
	case zapcore.StringerType:
		if s, ok := f.Interface.(fmt.Stringer); ok && s != nil {
			return zap.String(f.Key, scrub.String(s.String())), true
		}
	}
	return f, false
}

// slogBridge hands the go-sdk's slog records to zap, at warn and above only: the SDK logs
// every session connect and disconnect at info, which the daemon logs itself.
type slogBridge struct {
	log    *zap.Logger
	prefix string
}

func newSlogBridge(log *zap.Logger) *slog.Logger {
	return slog.New(&slogBridge{log: log.Named("mcp")})
}

func (b *slogBridge) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (b *slogBridge) Handle(_ context.Context, r slog.Record) error {
	fields := make([]zap.Field, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, zap.Any(b.prefix+a.Key, a.Value.Any()))
		return true
	})
	if r.Level >= slog.LevelError {
		b.log.Error(r.Message, fields...)
	} else {
		b.log.Warn(r.Message, fields...)
	}
	return nil
}

func (b *slogBridge) WithAttrs(as []slog.Attr) slog.Handler {
	fields := make([]zap.Field, 0, len(as))
	for _, a := range as {
		fields = append(fields, zap.Any(b.prefix+a.Key, a.Value.Any()))
	}
	return &slogBridge{log: b.log.With(fields...), prefix: b.prefix}
}

func (b *slogBridge) WithGroup(name string) slog.Handler {
	return &slogBridge{log: b.log, prefix: b.prefix + name + "."}
}
