package daemon_test

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// vmKiB reads a field of /proc/<pid>/status in KiB (VmRSS, VmHWM).
func vmKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// Issue 26.9: connections each sending an unfinished 15 MiB line straight to the socket took
// the daemon to 1.1 GB. Every session's framer holds at most one line of its bound, so the
// daemon's peak resident size grows by far less than what was sent; each flooded session,
// once its line ends, gets a JSON-RPC error for it and keeps working; and a new session is
// served meanwhile.
func TestOversizedLinesKeepTheDaemonBounded(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	const conns, line = 8, 15 << 20 // 120 MiB in flight; the old framer kept all of it
	w := newWorld(t)
	d := w.startDaemon()
	pre := sessionwire.NewPreamble(sessionwire.KindMCP, func(string) string { return "" }, "flood")
	type flooded struct {
		c  *net.UnixConn
		br *bufio.Reader
	}
	var fl []flooded
	for range conns {
		c, br, _, err := testkit.DialPreamble(w.Socket, sessionwire.Line(pre), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fl = append(fl, flooded{c, br})
	}
	before := vmKiB(t, d.Pid(), "VmRSS")
	chunk := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 1<<20))
	var wg sync.WaitGroup
	for _, f := range fl {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f.c.SetWriteDeadline(time.Now().Add(2 * time.Minute))
			for sent := 0; sent < line; sent += len(chunk) {
				if _, err := f.c.Write(chunk); err != nil {
					t.Errorf("flooding: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait() // every line written, none ended: the daemon has read all but a socket buffer
	// A new session is served while the others hang on their unfinished lines.
	h := w.startRawHarness()
	send(t, h, testkit.InitializeRequest(`"init"`, "2025-06-18", "after-flood"))
	wait(t, h, `"init"`)
	grew := vmKiB(t, d.Pid(), "VmHWM") - before
	t.Logf("peak resident size grew by %d KiB for %d MiB of unfinished lines", grew, conns*line>>20)
	// Each session may hold one line of the bound (1 MiB) and the race detector's shadow of
	// it; the old framer kept every byte sent, and more (549 MiB for these 120).
	if grew > conns*line/1024*3/4 {
		t.Errorf("the daemon's peak resident size grew by %d MiB for %d MiB of unfinished lines", grew>>10, conns*line>>20)
	}
	for i, f := range fl {
		_ = f.c.SetDeadline(time.Now().Add(time.Minute))
		if _, err := f.c.Write([]byte("\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		refusal, _ := f.br.ReadString('\n')
		if !strings.Contains(refusal, `"id":null`) || !strings.Contains(refusal, `-32600`) || !strings.Contains(refusal, "longer than") {
			t.Fatalf("session %d: the over-long line answered %q", i, refusal)
		}
		// ping before initialize: the SDK answers it either way; any answer under id 2
		// shows the session read on past the discarded line.
		if next, _ := f.br.ReadString('\n'); !strings.Contains(next, `"id":2`) {
			t.Fatalf("session %d after the over-long line: %q", i, next)
		}
	}
}
