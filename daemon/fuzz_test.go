package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
	"go.uber.org/zap"
)

// okAPI answers every backend request with a small health-like object, so tool calls in
// the fuzz input run their handlers without a backend.
type okAPI struct{}

func (okAPI) Call(context.Context, *backend.Request) (any, error) {
	return map[string]any{"status": "ok", "version": "2.3.0"}, nil
}

// fuzzDaemon is newTestDaemon (a real accept loop: peer check, preamble, target registry,
// line transport, the MCP server (mcpserver); a fake backend) serving on a private socket, with
// its log discarded: an observed log would keep every line of every input in memory.
func fuzzDaemon(f *testing.F) string {
	socket, ln := testSocket(f)
	d, _, cancel := newTestDaemon(f, socket, ln)
	f.Cleanup(cancel)
	d.log = zap.NewNop()
	serving(f, d)
	return socket
}

// dialSession opens a raw connection and completes the preamble exchange.
func dialSession(t testing.TB, socket string) (*net.UnixConn, *bufio.Reader) {
	pre := sessionwire.Preamble{Resmongw: sessionwire.Protocol, Kind: sessionwire.KindMCP, Env: map[string]string{"HOME": "/nonexistent"}}
	c, br, line, err := testkit.DialPreamble(socket, sessionwire.Line(pre), 10*time.Second)
	var reply sessionwire.Reply
	if err != nil || json.Unmarshal(line, &reply) != nil || !reply.OK {
		t.Fatalf("preamble reply %q: %v", line, err)
	}
	return c, br
}

var fuzzInit = testkit.InitializeRequest(`"init"`, "2025-06-18", "fuzz") + "\n" + testkit.InitializedNotification + "\n"

// pingAfter follows the fuzz input on the wire; its id is one the input is unlikely to reuse.
const (
	pingAfterID = "ping-after-the-fuzz-input"
	pingAfter   = `{"jsonrpc":"2.0","id":"` + pingAfterID + `","method":"ping"}` + "\n"
)

// FuzzJSONRPCLines: whatever a harness writes after a valid handshake (garbage, batches,
// non-objects, odd ids, tool calls with any arguments), the daemon answers only with
// JSON-RPC objects, the session survives it (a ping sent after the input is answered), the
// session ends within a bound once the client hangs up, and a bystander session that is open
// the whole time keeps being served.
func FuzzJSONRPCLines(f *testing.F) {
	socket := fuzzDaemon(f)
	bc, _ := dialSession(f, socket)
	// The bystander is a real SDK client on its own connection (the reply line is consumed).
	client := mcp.NewClient(&mcp.Implementation{Name: "bystander", Version: "1"}, nil)
	bs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: bc, Writer: bc},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = bs.Close() })

	f.Fuzz(func(t *testing.T, input []byte) {
		c, br := dialSession(t, socket)
		defer c.Close()
		// A harness waits for the initialize answer before it sends anything else.
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write([]byte(fuzzInit)); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadBytes('\n')
		var init map[string]any
		if err != nil || json.Unmarshal(line, &init) != nil || init["id"] != "init" || init["result"] == nil {
			t.Fatalf("initialize: %q %v", line, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Write(append(append(input, '\n'), pingAfter...))
			_ = c.CloseWrite()
			done <- err
		}()
		// drainBound (over a minute by default) is the daemon's own bound for answers after a
		// half-close; a fake backend answers at once, so anything near it is a hang.
		sc := bufio.NewScanner(br)
		sc.Buffer(nil, 32<<20)
		pinged := false
		for sc.Scan() {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      any             `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.JSONRPC != "2.0" {
				t.Fatalf("the daemon wrote a line that is not a JSON-RPC object: %q", sc.Bytes())
			}
			// An input can hold a request of its own with the ping's id (the fuzzer learns it);
			// if that one is still in flight, the ping's answer is the duplicate-id error.
			if m.ID == pingAfterID && (string(m.Result) == "{}" ||
				m.Error != nil && strings.Contains(m.Error.Message, "already used by a request in flight")) {
				pinged = true
			}
		}
		if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("session did not end: %v", err)
		}
		<-done
		if !pinged {
			t.Fatal("the session did not survive the input: the ping after it got no answer")
		}

		// The bystander calls a tool: its session, the tool layer and the target all still
		// serve. (tools/list would prove no more and cost six times what the rest of the
		// exec does: 25 schemas encoded, wrapped and decoded each time.)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := bs.CallTool(ctx, &mcp.CallToolParams{Name: "health", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("bystander session after the input: %v %+v", err, res)
		}
	})
}
