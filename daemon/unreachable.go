package daemon

import (
	"bufio"
	"context"
	"net"

	"github.com/resmongw/resmongw/proxy"
	"github.com/resmongw/resmongw/sessionwire"
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
	// TODO(confirm): once the session's write policy (pre.Writes) lands, apply it here as
	// serveMCP does, so --writes=off hides the writes from this tools/list too; never with a
	// policy that asks the person, since nothing can be sent anyway.
	srv := proxy.NewServer(proxy.Unreachable(why), &proxy.ServerOptions{Tools: proxy.Tools})
	if _, err := c.Write(sessionwire.Line(sessionReply())); err != nil {
		return
	}
	lt := &lineTransport{c: c, br: br, goodbye: pre.Session >= 1}
	ss, err := srv.Connect(context.Background(), proxy.WrapTransport(lt, proxy.Tools), nil)
	if err != nil {
		return
	}
	_ = ss.Wait()
}
