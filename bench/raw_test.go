package bench

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/tools"
)

// rawAgainstStub connects a RawSession to the real MCP server and tool layer (backend
// stubbed) over a pipe in this process: the server side is what the daemon runs per session.
func rawAgainstStub(t *testing.T, ctx context.Context) *RawSession {
	t.Helper()
	client, server := net.Pipe()
	srv := mcpserver.NewServer(stubAPI{}, &mcpserver.ServerOptions{Tools: tools.Tools})
	ss, err := srv.Connect(ctx, mcpserver.WrapTransport(&mcp.IOTransport{Reader: server, Writer: server}, tools.Tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	s, err := newRawSession(ctx, client, client, func() { _ = client.Close() })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestRawSessionCallsTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := rawAgainstStub(t, ctx)
	for range 3 { // ids advance; every answer is matched to its request
		text, err := s.Health()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "79caaa17-df22-40db-b981-af5d6ada7b9c") {
			t.Fatalf("health answer lacks the stub's runtime_id: %s", text)
		}
	}
	if s.next != 4 {
		t.Fatalf("next id = %d after initialize and 3 calls, want 4", s.next)
	}
	// An unknown tool is an error either way the server reports it (JSON-RPC error or
	// isError), and the session stays usable.
	if _, err := s.CallTool("no_such_tool", []byte(`{"x":1}`)); err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
	if _, err := s.Health(); err != nil {
		t.Fatalf("after an error: %v", err)
	}
}

// A server that never answers cannot hold a call past its context: ending the context closes
// the stream.
func TestRawSessionContextEndsACall(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	go func() { // answer initialize, then swallow everything
		buf := make([]byte, 4096)
		if _, err := server.Read(buf); err != nil {
			return
		}
		_, _ = io.WriteString(server, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+Protocol+`","capabilities":{},"serverInfo":{"name":"mute","version":"0"}}}`+"\n")
		_, _ = io.Copy(io.Discard, server)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newRawSession(ctx, client, client, func() { _ = client.Close() })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() { _, err := s.Health(); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call with no answer succeeded")
		}
	case <-time.After(20 * time.Second): // a hang guard, not a speed check
		t.Fatal("the call outlived its context")
	}
}

func TestRawSessionRejectsOtherProtocol(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		buf := make([]byte, 4096)
		if _, err := server.Read(buf); err != nil {
			return
		}
		_, _ = io.WriteString(server, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05"}}`+"\n")
		_, _ = io.Copy(io.Discard, server)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := newRawSession(ctx, client, client, func() { _ = client.Close() }); err == nil || !strings.Contains(err.Error(), "2024-11-05") {
		t.Fatalf("initialize with another protocol: %v", err)
	}
}
