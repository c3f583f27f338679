package daemon

import (
	"bufio"
	"context"
	"net"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/tools"
)

// ServeUnreachable serves one shim session on c when no daemon can be reached; the shim runs
// it in its own process (shim.Unreachable) on one end of a socket pair. It is a daemon's
// session without the daemon: the preamble and reply, the line transport, proxy.NewServer over
// the tool table behind the wire wrapper, so initialize, server/discover and tools/list
// answer exactly as a daemon's would, while every tool that would reach resmon answers that
// the daemon cannot be reached, with why's latest reason (proxy.Unreachable). It returns when
// the session ends: the shim half-closed its end (answers owed are written first) or closed it.
func ServeUnreachable(c *net.UnixConn, why func() error) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 4096)
	pre, err := sessionwire.ReadPreamble(br)
	if err != nil {
		_, _ = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, Error: err.Error()}))
		return
	}
	policy, err := mcpserver.ParseWritePolicy(pre.Writes)
	if err != nil {
		_, _ = c.Write(sessionwire.Line(sessionwire.Reply{Resmongw: sessionwire.Protocol, Error: err.Error()}))
		return
	}
	ctx := context.Background()
	if policy == mcpserver.WritesOff {
		// As on a daemon (serveMCP): the writes are not listed and a call of one is refused.
		// Under the other policies nobody is asked: no write can be sent, so there is nothing
		// to confirm.
		writes := mcpserver.NewConfirmations(mcpserver.DefaultConfirmTimeout).Session(policy)
		defer writes.Close()
		ctx = mcpserver.WithWriteSession(ctx, writes)
	}
	srv := mcpserver.NewServer(backend.Unreachable(why), &mcpserver.ServerOptions{Tools: tools.Tools})
	if _, err := c.Write(sessionwire.Line(sessionReply())); err != nil {
		return
	}
	lt := &lineTransport{c: c, br: br, goodbye: pre.Session >= 1}
	ss, err := srv.Connect(mcpserver.WithMaxOutput(ctx, pre.MaxOutput), mcpserver.WrapTransport(lt, tools.Tools), nil)
	if err != nil {
		return
	}
	_ = ss.Wait()
}
