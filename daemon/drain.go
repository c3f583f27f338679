package daemon

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainWait bounds how long answers to requests already read may still be written after the
// client half-closed (a tool call may take the backend's 30 s).
const drainWait = 35 * time.Second

// drainTransport lets a client half-close and still get its answers. When the shim sees
// stdin EOF it shuts down the socket's write side; the SDK would treat the resulting read EOF
// as the end of the session and drop the replies of requests still running, so
// `printf '<requests>' | resmongw stdio` would print nothing. Here the EOF is held back until
// every request read so far has been answered (or drainWait passes).
type drainTransport struct{ inner mcp.Transport }

func (t drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, pending: map[jsonrpc.ID]struct{}{}, idle: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// SupportsProtocolVersion forwards the inner transport's answer (mcp.ProtocolVersionSupporter).
func (t drainTransport) SupportsProtocolVersion(v string) bool {
	if p, ok := t.inner.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(v)
	}
	return true
}

type drainConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{}
	idle    chan struct{} // signalled when pending becomes empty
	closed  chan struct{} // closed by Close: stop draining
	once    sync.Once
}

func (c *drainConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			c.mu.Lock()
			c.pending[r.ID] = struct{}{}
			c.mu.Unlock()
		}
		return m, nil
	}
	if errors.Is(err, io.EOF) {
		c.waitIdle(ctx)
	}
	return nil, err
}

func (c *drainConn) waitIdle(ctx context.Context) {
	deadline := time.NewTimer(drainWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

func (c *drainConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, r.ID)
		empty := len(c.pending) == 0
		c.mu.Unlock()
		if empty {
			select {
			case c.idle <- struct{}{}:
			default:
			}
		}
	}
	return err
}
