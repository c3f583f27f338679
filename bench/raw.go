package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// RawSession is an MCP client that writes JSON-RPC lines and reads the answer lines itself,
// with no MCP SDK: what a harness that is not go-sdk (Claude Code, Codex, Cursor) does. It does
// the least a client must (match the id, check the error and isError), so its own cost is
// small and a measurement through it is the gateway's cost, not a client library's. It is not
// safe for concurrent use: one call at a time, as the overhead measurement makes them.
type RawSession struct {
	w     io.Writer
	r     *bufio.Reader
	next  int64
	req   []byte // the request line, reused between calls
	Pid   int    // the shim's pid, 0 when there is no shim
	close func()
	stop  func() bool // releases the context watch
}

// rawLineMax bounds one answer line; the largest default tool answer is under 8 KiB.
const rawLineMax = 1 << 20

// newRawSession completes initialize on an already-open stream. When ctx ends, closeStream is
// called, which unblocks any pending read, so no call outlives the caller's context.
func newRawSession(ctx context.Context, w io.Writer, r io.Reader, closeStream func()) (*RawSession, error) {
	s := &RawSession{w: w, r: bufio.NewReaderSize(r, rawLineMax), close: closeStream}
	s.stop = context.AfterFunc(ctx, closeStream)
	if _, err := io.WriteString(w, testkit.InitializeRequest("0", Protocol, "resmongw-bench-raw")+"\n"); err != nil {
		s.Close()
		return nil, fmt.Errorf("raw initialize: %w", err)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := s.await(0, &res); err != nil {
		s.Close()
		return nil, fmt.Errorf("raw initialize: %w", err)
	}
	if res.ProtocolVersion != Protocol {
		s.Close()
		return nil, fmt.Errorf("raw initialize: server chose protocol %q, asked for %q", res.ProtocolVersion, Protocol)
	}
	if _, err := io.WriteString(w, testkit.InitializedNotification+"\n"); err != nil {
		s.Close()
		return nil, err
	}
	s.next = 1
	return s, nil
}

// rawMessage is the part of an incoming line a client needs.
type rawMessage struct {
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	Error  *rawError       `json:"error"`
	Result json.RawMessage `json:"result"`
}

type rawError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// await reads lines until the answer to id, skipping the server's notifications (a server
// request would need an answer; the gateway sends none to a client that declared no
// capabilities), and decodes its result into out.
func (s *RawSession) await(id int64, out any) error {
	for {
		line, err := s.r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Errorf("answer line longer than %d bytes", rawLineMax)
			}
			return err
		}
		var m rawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("bad JSON-RPC line %.200q: %w", line, err)
		}
		if m.Method != "" || m.ID == nil {
			continue
		}
		if *m.ID != id {
			return fmt.Errorf("answer to id %d while waiting for %d", *m.ID, id)
		}
		if m.Error != nil {
			return fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
		}
		return json.Unmarshal(m.Result, out)
	}
}

// CallTool calls one tool with arguments given as a JSON object (nil means {}) and returns the
// text of its answer; a tool error is an error that carries the text.
func (s *RawSession) CallTool(name string, argsJSON []byte) (string, error) {
	if argsJSON == nil {
		argsJSON = []byte("{}")
	}
	id := s.next
	s.next++
	b := append(s.req[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"arguments":`...)
	b = append(b, argsJSON...)
	b = append(b, "}}\n"...)
	s.req = b
	if _, err := s.w.Write(b); err != nil {
		return "", err
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := s.await(id, &res); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	if res.IsError {
		return text.String(), fmt.Errorf("%s: tool error: %.300s", name, text.String())
	}
	return text.String(), nil
}

// Health calls the health tool.
func (s *RawSession) Health() (string, error) { return s.CallTool("health", nil) }

// Close ends the session (closing the stream ends the shim or the daemon's session).
func (s *RawSession) Close() {
	if s.stop != nil {
		s.stop()
	}
	if s.close != nil {
		s.close()
		s.close = nil
	}
}

// RawSocketSession dials the daemon, speaks the shim's preamble and then raw JSON-RPC.
func (w *World) RawSocketSession(ctx context.Context) (*RawSession, error) {
	return w.rawSocketSession(ctx, w.Socket)
}

func (w *World) rawSocketSession(ctx context.Context, socket string) (*RawSession, error) {
	c, br, err := w.dialPreambleTo(socket)
	if err != nil {
		return nil, err
	}
	return newRawSession(ctx, c, br, func() { _ = closeOnce(c) })
}

// RawShimSession launches `resmongw stdio` as a harness does and speaks raw JSON-RPC on its
// stdin and stdout.
func (w *World) RawShimSession(ctx context.Context, env []string) (*RawSession, error) {
	return rawShimSession(ctx, w.Bin, env)
}

func rawShimSession(ctx context.Context, bin string, env []string) (*RawSession, error) {
	cmd := exec.Command(bin, "stdio")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := testkit.Start(cmd)
	if err != nil {
		return nil, err
	}
	// Closing stdin is how a harness ends a stdio server; the shim then drains and exits.
	// Stop's SIGTERM (then SIGKILL) covers a shim that would not.
	closeShim := func() {
		_ = stdin.Close()
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			p.Stop(time.Second)
		}
	}
	s, err := newRawSession(ctx, stdin, stdout, closeShim)
	if err != nil {
		return nil, err
	}
	s.Pid = p.Pid()
	return s, nil
}
