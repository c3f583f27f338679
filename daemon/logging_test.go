package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/scrub"
	"go.uber.org/zap"
)

// Every log line passes through the scrubber: message, string, error and stringer fields.
func TestLoggerScrubsTokens(t *testing.T) {
	secret := "tok_" + strings.Repeat("Z", 40)
	scrub.Add(secret)
	path := filepath.Join(t.TempDir(), "logs", "resmongw.log")
	log, closeLog, err := newLogger(path, false)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("message with "+secret, zap.String("s", "x"+secret), zap.Error(errors.New("e "+secret)),
		zap.Stringer("st", stringer("y"+secret)), zap.Any("any", map[string]string{"k": secret}))
	log.With(zap.String("w", secret)).Warn("with")
	newSlogBridge(log).Warn("sdk "+secret, "attr", secret)
	closeLog()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatalf("token in log:\n%s", b)
	}
	if strings.Count(string(b), scrub.Placeholder) < 7 || !strings.Contains(string(b), `"logger":"mcp"`) {
		t.Fatalf("log lines missing:\n%s", b)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("log mode %v", fi.Mode())
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
