package daemon

import (
	"bufio"
	"context"
	"errors"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/tools"
)

// ServeUnreachable serves one shim session on c when no daemon can be reached; the shim runs
// it in its own process (shim.Unreachable) on one end of a socket pair. It is a daemon's
// session without the daemon: the preamble and reply, the line transport, mcpserver.NewServer
// over the tool table and connectSession, as serveMCP does, so initialize, server/discover and
// tools/list answer exactly as a daemon's would, while every tool that would reach resmon
// answers that the daemon cannot be reached, with why's latest reason (backend.Unreachable).
// It returns when the session ends: the shim half-closed its end (answers owed are written
// first) or closed it.
func ServeUnreachable(c *net.UnixConn, why func() error) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 4096)
	pre, err := sessionwire.ReadPreamble(br)
	if err != nil {
		refuse(c, err)
		return
	}
	policy, ok := writePolicy(c, pre)
	if !ok {
		return
	}
	var writes *mcpserver.WriteSession
	if policy == mcpserver.WritesOff {
		// As on a daemon (serveMCP): the writes are not listed and a call of one is refused.
		// Under the other policies nobody is asked: no write can be sent, so there is nothing
		// to confirm.
		writes = mcpserver.NewConfirmations(mcpserver.DefaultConfirmTimeout).Session(policy)
		defer writes.Close()
	}
	srv := mcpserver.NewServer(backend.Unreachable(why), &mcpserver.ServerOptions{Tools: tools.Tools})
	lt := &lineTransport{c: c, br: br, goodbye: pre.Session >= 1}
	ss, err := connectSession(context.Background(), c, srv, lt, pre, writes)
	if err != nil {
		return
	}
	_ = ss.Wait()
}

// refuse answers a preamble with why no session starts; the shim says why and exits.
func refuse(c *net.UnixConn, why error) {
	_, _ = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, Error: why.Error()}))
}

// writePolicy is the session's --writes, or false once the preamble is refused: never a
// session under a policy we did not understand.
func writePolicy(c *net.UnixConn, pre *sessionwire.Preamble) (mcpserver.WritePolicy, bool) {
	policy, err := mcpserver.ParseWritePolicy(pre.Writes)
	if err != nil {
		refuse(c, err)
		return "", false
	}
	return policy, true
}

// errNoReply is connectSession's failure to say OK: the shim is gone, nothing to report.
var errNoReply = errors.New("the session's reply was not written")

// connectSession says OK to the preamble and serves the session's MCP on lt with srv: the one
// setup of every session, a daemon's (serveMCP) and the shim's fallback's (ServeUnreachable).
func connectSession(ctx context.Context, c *net.UnixConn, srv *mcp.Server, lt *lineTransport, pre *sessionwire.Preamble, writes *mcpserver.WriteSession) (*mcp.ServerSession, error) {
	if _, err := c.Write(sessionwire.Line(sessionReply())); err != nil {
		return nil, errNoReply
	}
	return mcpserver.Connect(ctx, srv, tools.Tools, lt, mcpserver.Session{Writes: writes, MaxOutput: pre.MaxOutput})
}
