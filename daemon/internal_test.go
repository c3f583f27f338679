package daemon

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// The shim cannot import discovery, so it keeps its own copy of the key list.
func TestShimForwardsExactlyTheTargetKeys(t *testing.T) {
	if !slices.Equal(endpoint.EnvKeys, discovery.EnvKeys) {
		t.Fatalf("endpoint.EnvKeys %v != discovery.EnvKeys %v", endpoint.EnvKeys, discovery.EnvKeys)
	}
}

func TestPercentilesOverRing(t *testing.T) {
	s := newCallStats()
	// 1..100 ms, then enough 1000 ms calls to push the early ones out of the window.
	for i := 1; i <= 100; i++ {
		s.record("health", "", "rid-1", time.Duration(i)*time.Millisecond, time.Now())
	}
	got := s.snapshot()[0]
	if got.Calls != 100 || got.P50Millis != 50 || got.P99Millis != 99 || got.LastRuntimeID != "rid-1" {
		t.Fatalf("first 100: %+v", got)
	}
	for i := 0; i < latencyWindow; i++ {
		s.record("health", "backend_unavailable", "", time.Second, time.Now())
	}
	got = s.snapshot()[0]
	if got.Calls != uint64(100+latencyWindow) || got.P50Millis != 1000 || got.Errors["backend_unavailable"] != latencyWindow {
		t.Fatalf("after the window rolled: %+v", got)
	}
	if got.LastRuntimeID != "rid-1" {
		t.Fatalf("a failed call without a runtime id must not erase the last one: %q", got.LastRuntimeID)
	}
}

func TestReadPreambleBounds(t *testing.T) {
	ok := string(endpoint.Line(endpoint.Preamble{Resmongw: 1, Kind: "mcp", Env: map[string]string{"HOME": "/h"}})) + `{"jsonrpc":"2.0"}` + "\n"
	br := bufio.NewReaderSize(strings.NewReader(ok), 16)
	p, err := readPreamble(br)
	if err != nil || p.Env["HOME"] != "/h" {
		t.Fatalf("good preamble: %+v %v", p, err)
	}
	rest, _ := br.ReadString('\n')
	if rest != `{"jsonrpc":"2.0"}`+"\n" {
		t.Fatalf("bytes after the preamble lost: %q", rest)
	}
	for name, in := range map[string]string{
		"too long":     `{"resmongw":1,"kind":"mcp","client":"` + strings.Repeat("a", endpoint.MaxPreamble) + `"}` + "\n",
		"not json":     "hello\n",
		"old protocol": `{"resmongw":0,"kind":"mcp"}` + "\n",
		"unknown kind": `{"resmongw":1,"kind":"shell"}` + "\n",
		"no newline":   `{"resmongw":1,"kind":"mcp"}`,
	} {
		if _, err := readPreamble(bufio.NewReaderSize(strings.NewReader(in), 4096)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

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

// The socket directory must be ours, private and real.
func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(loose); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(loose, link); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(link); err == nil {
		t.Fatal("a symlinked socket directory was accepted")
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := privateDir(other); err == nil {
			t.Fatal("a directory owned by another user was accepted")
		}
	}
}

func TestLockIsExclusiveAndNamesHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := acquireLock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = acquireLock(p)
	var ar *errAlreadyRunning
	if !errors.As(err, &ar) || ar.pid != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
	l.Release()
	l2, err := acquireLock(p)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}
