package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/resmongw/resmongw/shim/endpoint"
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
	g, ok := endpoint.ParseGoodbye([]byte(bye))
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
