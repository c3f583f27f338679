package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// newStoppableLineConn is newTestLineConn for a client that does (goodbye) or does not speak
// the session protocol.
func newStoppableLineConn(t *testing.T, goodbye bool) (*lineConn, *bufio.Reader, func(string)) {
	t.Helper()
	s, c := socketPair(t)
	mc, err := (&lineTransport{c: s, br: bufio.NewReaderSize(s, 4096), goodbye: goodbye}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lc := mc.(*lineConn)
	t.Cleanup(func() { _ = lc.Close() })
	send := func(line string) {
		if _, err := io.WriteString(c, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	return lc, bufio.NewReader(c), send
}

// A graceful stop: Read takes no further call (one already sent stays unread: not started),
// the call running is answered, then the goodbye goes out and the stream ends.
func TestLineConnStopAnswersThenSaysGoodbye(t *testing.T) {
	lc, client, send := newStoppableLineConn(t, true)
	ctx := readCtx(t)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health"}}`)
	if _, err := lc.Read(ctx); err != nil {
		t.Fatal(err)
	}
	lc.stop("restart")
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"health"}}`)
	read := make(chan error, 1)
	go func() {
		msg, err := lc.Read(ctx)
		if msg != nil {
			err = errors.New("a call was read after the stop")
		}
		read <- err
	}()
	id, _ := jsonrpc.MakeID(float64(1))
	if err := lc.Write(ctx, &jsonrpc.Response{ID: id, Result: []byte(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-read; !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the stop: %v, want EOF", err)
	}
	answer, _ := client.ReadString('\n')
	bye, _ := client.ReadString('\n')
	if !strings.Contains(answer, `"id":1`) {
		t.Fatalf("first line %q, want the answer to the running call", answer)
	}
	g, ok := sessionwire.ParseGoodbye([]byte(bye))
	if !ok || g.Mode != "restart" || len(g.Abandoned) != 0 {
		t.Fatalf("goodbye %q", bye)
	}
}

// A call still running at the drain bound is listed as abandoned; an older shim (no session
// protocol) gets no goodbye line at all, only the end of the stream.
func TestLineConnStopListsAbandonedAndSparesOlderShims(t *testing.T) {
	for _, goodbye := range []bool{true, false} {
		lc, client, send := newStoppableLineConn(t, goodbye)
		lc.drain = 1 // the bound passes at once
		ctx := readCtx(t)
		send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"health"}}`)
		if _, err := lc.Read(ctx); err != nil {
			t.Fatal(err)
		}
		lc.stop("stop")
		if _, err := lc.Read(ctx); !errors.Is(err, io.EOF) {
			t.Fatalf("Read after the stop: %v", err)
		}
		_ = lc.Close()
		rest, _ := io.ReadAll(client)
		switch {
		case goodbye && string(rest) != `{"resmongw":"goodbye","mode":"stop","abandoned":["slow"]}`+"\n":
			t.Fatalf("goodbye %q", rest)
		case !goodbye && len(rest) != 0:
			t.Fatalf("an older shim got %q", rest)
		}
	}
}

// The stop modes are the goodbye modes the shim knows.
func TestStopModesAreGoodbyeModes(t *testing.T) {
	if stopRestart.String() != sessionwire.GoodbyeRestart || stopEnd.String() != sessionwire.GoodbyeStop {
		t.Fatalf("stop modes %q/%q, goodbye modes %q/%q", stopRestart, stopEnd, sessionwire.GoodbyeRestart, sessionwire.GoodbyeStop)
	}
}

// requestStop(stopEnd) (what `resmongw stop` asks for): a session of a shim speaking the
// session protocol gets its answers, then a goodbye of mode "stop", then the end of the stream.
func TestRequestedStopSaysGoodbyeStop(t *testing.T) {
	socket, ul := testSocket(t)
	d, _, cancel := newTestDaemon(t, socket, ul)
	defer cancel()
	ran := make(chan int, 1)
	go func() { ran <- d.run(make(chan os.Signal), time.Hour) }()
	pre := sessionwire.NewPreamble(sessionwire.KindMCP, func(string) string { return "" }, "test")
	pre.Session = sessionwire.SessionProtocol
	c, br, reply, err := testkit.DialPreamble(socket, sessionwire.Line(pre), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var r sessionwire.Reply
	if json.Unmarshal(reply, &r) != nil || !r.OK || r.Session != sessionwire.SessionProtocol || !slices.Contains(r.ReadTools, "health") || slices.Contains(r.ReadTools, "run_sweep") {
		t.Fatalf("reply %s", reply)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, testkit.InitializeRequest("1", "2025-06-18", "t")+"\n"); err != nil {
		t.Fatal(err)
	}
	if l, _ := br.ReadString('\n'); !strings.Contains(l, `"id":1,"result"`) {
		t.Fatalf("initialize: %q", l)
	}
	d.requestStop(stopEnd)
	bye, _ := br.ReadString('\n')
	if g, ok := sessionwire.ParseGoodbye([]byte(bye)); !ok || g.Mode != sessionwire.GoodbyeStop {
		t.Fatalf("after the stop: %q, want a goodbye of mode stop", bye)
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || err != nil {
		t.Fatalf("after the goodbye: %q %v", rest, err)
	}
	if code := <-ran; code != 0 {
		t.Fatalf("run: %d", code)
	}
}
