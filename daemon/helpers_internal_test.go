package daemon

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/tools"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// newTestDaemon is a real accept loop and MCP stack on ln (socket path socket), with a fake
// backend and an observed logger. The caller runs it (serve or run).
func newTestDaemon(t testing.TB, socket string, ln listener) (*daemon, *observer.ObservedLogs, context.CancelFunc) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	d, cancel := newDaemon(socket, "", zap.New(core), slog.New(slog.DiscardHandler), time.Hour, nil)
	d.setListener(ln)
	d.targets.make = func(key string, env discovery.Target) *target {
		w := discovery.NewWatcher(env, nil) // never started: the fake API needs no discovery
		tg := &target{key: key, env: env, watcher: w, upstream: backend.NewUpstream(w, nil), stats: newCallStats()}
		tg.server = mcpserver.NewServer(okAPI{}, &mcpserver.ServerOptions{Tools: tools.Tools,
			OnCall: func(ctx context.Context, r mcpserver.CallRecord) { d.recordCall(ctx, tg, r) }})
		return tg
	}
	return d, logs, cancel
}

// serving starts d's accept loop; when the test ends, d shuts down and the loop has returned.
func serving(t testing.TB, d *daemon) {
	served := make(chan struct{})
	go func() { _ = d.serve(); close(served) }()
	t.Cleanup(func() { d.shutdown(stopRestart); <-served })
}

// servingTestDaemon is newTestDaemon on a fresh private socket, serving until the test ends.
func servingTestDaemon(t testing.TB) (*daemon, string, *observer.ObservedLogs) {
	t.Helper()
	socket, ln := testSocket(t)
	d, logs, cancel := newTestDaemon(t, socket, ln)
	t.Cleanup(cancel)
	serving(t, d)
	return d, socket, logs
}

func testSocket(t testing.TB) (string, *net.UnixListener) {
	t.Helper()
	socket := filepath.Join(testkit.ShortTempDir(t), "s.sock")
	ln, err := listenPrivate(socket)
	if err != nil {
		t.Fatal(err)
	}
	return socket, ln
}

// flakyListener fails its first n accepts with err, then accepts for real.
type flakyListener struct {
	*net.UnixListener
	n   atomic.Int32
	err error
}

func (l *flakyListener) AcceptUnix() (*net.UnixConn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.UnixListener.AcceptUnix()
}
