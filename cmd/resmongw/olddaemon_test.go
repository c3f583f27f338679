package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/paths"
)

// oldDaemonHelper plays a daemon from before control requests: it holds the lock file with
// its pid, refuses every preamble kind but mcp and status as such a daemon does, and exits
// on SIGTERM.
const oldDaemonHelper = "old-daemon"

func oldDaemon(socket string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return 1
	}
	defer ln.Close()
	if err := os.WriteFile(paths.LockFile(socket), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return 1
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var pre struct{ Kind string }
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			_ = json.Unmarshal(line, &pre)
			b, _ := json.Marshal(map[string]any{"resmongw": 1, "ok": false, "error": "unknown preamble kind " + strconv.Quote(pre.Kind)})
			_, _ = c.Write(append(b, '\n'))
			c.Close()
		}
	}()
	<-sigs
	_ = os.Truncate(paths.LockFile(socket), 0) // as a daemon releasing its lock does
	return 0
}

// After an upgrade the running daemon predates stop/restart requests: stop falls back to
// SIGTERM and still waits until it is gone.
func TestStopAnOlderDaemon(t *testing.T) {
	socket := filepath.Join(testkit.ShortTempDir(t), "mcp.sock")
	ctx := testkit.Context(t, 60*time.Second)
	cmd := testkit.HelperCommand(ctx, oldDaemonHelper, socket)
	cmd.Args = append(cmd.Args, "serve") // a `serve` process, as the lock check requires
	p, err := testkit.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	if err := testkit.WaitListening(socket, 10*time.Second, p); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, func() bool { pid, _ := testkit.ReadPIDFile(paths.LockFile(socket)); return pid == p.Pid() }, "the lock file")
	code, out, errOut := runCLI("stop", "--socket", socket)
	if code != 0 || !strings.Contains(out, "stopped the daemon (pid "+strconv.Itoa(p.Pid())) {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		t.Fatal("the old daemon still runs")
	}
}
