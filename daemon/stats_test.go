package daemon

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/mcpserver"
)

// B3: client-chosen tool names neither grow the stats nor reach the log verbatim.
func TestUnknownToolNamesShareOneStatsEntry(t *testing.T) {
	d, socket, logs := servingTestDaemon(t)

	c, br := dialSession(t, socket)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	w := bufio.NewWriter(c)
	fmt.Fprint(w, fuzzInit)
	const n = 300
	long := strings.Repeat("x", 500)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bogus-%d-%s"}}`+"\n", i+1, i, long)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":100000,"method":"tools/call","params":{"name":"health"}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for got := 0; got < n+2; got++ { // initialize + the calls
		if _, err := br.ReadBytes('\n'); err != nil {
			t.Fatalf("after %d answers: %v", got, err)
		}
	}
	var tgt *target
	for _, x := range d.targets.list() {
		tgt = x
	}
	stats := tgt.stats.snapshot()
	names := map[string]uint64{}
	for _, s := range stats {
		names[s.Tool] = s.Calls
	}
	if len(names) != 2 || names[mcpserver.UnknownTool] != n || names["health"] != 1 {
		t.Errorf("%d stats entries (%d under %q, %d health), want 2: %q with %d calls and health with 1",
			len(names), names[mcpserver.UnknownTool], mcpserver.UnknownTool, names["health"], mcpserver.UnknownTool, n)
	}
	calls := logs.FilterMessage("tool call").All()
	if len(calls) != n+1 {
		t.Fatalf("%d tool call lines, want %d", len(calls), n+1)
	}
	for _, e := range calls {
		m := e.ContextMap()
		req, _ := m["requested"].(string)
		switch m["tool"] {
		case "health":
			if _, ok := m["requested"]; ok {
				t.Errorf("a known tool logged a requested name: %v", m)
			}
		case mcpserver.UnknownTool:
			if !strings.HasPrefix(req, "bogus-") || len(req) > mcpserver.MaxRequestedName+len("…") {
				t.Errorf("requested = %q (%d bytes), want the name cut to %d", req, len(req), mcpserver.MaxRequestedName)
			}
		default:
			t.Errorf("tool logged as %v", m["tool"])
		}
	}
}

// B3 (second fence): even names recorded directly are capped.
func TestCallStatsCapTheNumberOfTools(t *testing.T) {
	s := newCallStats()
	for i := 0; i < 5*maxTrackedTools; i++ {
		s.record(fmt.Sprintf("t%d", i), "", "", time.Millisecond, time.Now())
	}
	if got := len(s.snapshot()); got > maxTrackedTools+1 {
		t.Errorf("%d tool entries, want at most %d", got, maxTrackedTools+1)
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
