package shim

import (
	"bufio"
	"os"
	"strconv"
	"testing"

	"github.com/resmongw/resmongw/sessionwire"
)

// A call in steady state allocates nothing in the relay: the shim's heap is never collected
// in a session of normal length (far below the collector's first goal), so every byte a call
// left behind would stay in the shim's private memory for the session's life.
func TestRelayCallAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := newScripted(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); outR.Close() })
	conn, err := dial(s.path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(nil, outW)
	code := make(chan int, 1)
	go func() { code <- r.run(conn, inR) }()
	d := s.next(sessionwire.SessionProtocol)
	hout := bufio.NewReader(outR)

	// The harness and the fake daemon allocate nothing per call either, so what is counted
	// is the relay's.
	var req, ans, idText []byte
	id := 100
	call := func(method, tool string, strID bool) {
		id++
		idText = idText[:0]
		if strID {
			idText = append(idText, '"', 'k')
		}
		idText = strconv.AppendInt(idText, int64(id), 10)
		if strID {
			idText = append(idText, '"')
		}
		req = append(append(append(append(append(append(req[:0], `{"jsonrpc":"2.0","id":`...), idText...), `,"method":"`...), method...), `","params":{"name":"`...), tool...)
		req = append(req, `","arguments":{"x":1}}}`+"\n"...)
		if _, err := inW.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := d.br.ReadSlice('\n'); err != nil {
			t.Fatal(err)
		}
		ans = append(append(append(ans[:0], `{"jsonrpc":"2.0","id":`...), idText...), `,"result":{"content":[{"type":"text","text":"{\"ok\":true}"}]}}`+"\n"...)
		if _, err := d.c.Write(ans); err != nil {
			t.Fatal(err)
		}
		if _, err := hout.ReadSlice('\n'); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 { // warm: buffers, the free list, the tool names
		call("tools/call", "health", false)
		call("tools/call", "health", true)
		call("tools/list", "", false)
	}
	for _, c := range []struct {
		name, method, tool string
		strID              bool
	}{{"tools/call, number id", "tools/call", "health", false}, {"tools/call, string id", "tools/call", "health", true}, {"tools/list", "tools/list", "", false}} {
		// A few allocations in a run are the runtime's own (a new thread's, a timer's); 300
		// calls make each one count for less than a call's worth.
		// A string id costs its key's one string (the pending table holds it), a number none.
		want := 0.0
		if c.strID {
			want = 1
		}
		n := testing.AllocsPerRun(300, func() { call(c.method, c.tool, c.strID) })
		t.Logf("%s: %v allocations per call", c.name, n)
		if n > want {
			t.Errorf("%s: %v allocations per call, want at most %v", c.name, n, want)
		}
	}
	inW.Close()
	d.eof(t) // the session's end, before the daemon closes (else a reconnect attempt)
	d.c.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d", c)
	}
}
