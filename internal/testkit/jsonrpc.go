package testkit

import (
	"bufio"
	"net"
	"time"
)

// InitializeRequest is an MCP initialize request (one line, without its newline); id is raw
// JSON (`"boot"`, `1`).
func InitializeRequest(id, protocol, client string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"` + protocol +
		`","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`
}

// InitializedNotification is what a client sends after the initialize answer.
const InitializedNotification = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// DialPreamble connects to a daemon's socket as a shim does: it writes the preamble line and
// reads the daemon's one-line reply within limit. What follows on the returned reader is the
// session's JSON-RPC stream; the caller judges the reply.
func DialPreamble(socket string, preamble []byte, limit time.Duration) (c *net.UnixConn, br *bufio.Reader, reply []byte, err error) {
	c, err = net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, nil, nil, err
	}
	_ = c.SetDeadline(time.Now().Add(limit))
	if _, err := c.Write(preamble); err != nil {
		c.Close()
		return nil, nil, nil, err
	}
	br = bufio.NewReader(c)
	reply, err = br.ReadBytes('\n')
	if err != nil {
		c.Close()
		return nil, nil, reply, err
	}
	_ = c.SetDeadline(time.Time{})
	return c, br, reply, nil
}
