package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// A write call's record and a warning reach the file as they are logged, without waiting for
// the periodic flush or the logger's close; a read's record may wait in the buffer.
func TestLogWritesAndWarningsReachTheFileAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "resmongw.log")
	log, closeLog, err := newLogger(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	log.Info("tool call", zap.String("tool", "health"), zap.Bool("write", false))
	log.Info("tool call", zap.String("tool", "start_routine"), zap.Bool("write", true))
	if got := read(); !strings.Contains(got, `"tool":"start_routine"`) || !strings.Contains(got, `"tool":"health"`) {
		t.Fatalf("after a write call's record the file holds:\n%s", got)
	}
	log.Info("tool call", zap.String("tool", "health2"), zap.Bool("write", false))
	log.Warn("backend gone")
	if got := read(); !strings.Contains(got, `"msg":"backend gone"`) || !strings.Contains(got, `"tool":"health2"`) {
		t.Fatalf("after a warning the file holds:\n%s", got)
	}
	log.With(zap.Bool("write", true)).Info("write via With")
	if got := read(); !strings.Contains(got, `"msg":"write via With"`) {
		t.Fatalf("after a write record made With the file holds:\n%s", got)
	}
}
