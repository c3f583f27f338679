package daemon

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/tools"
	"github.com/resmongw/resmongw/version"
)

// session is one harness connection serving MCP.
type session struct {
	statusdoc.SessionStatus
	ss *mcp.ServerSession
	lc *lineConn // its connection, drained at a graceful stop
	// writes is the session's write policy; closed at a stop, so an open question sends nothing.
	writes *mcpserver.WriteSession
	ended  chan struct{} // closed when serveMCP is done with it
}

// status is the session as status shows it: clientInfo is read from the SDK's session each
// time (it holds what initialize said, and a shim that reconnected replays initialize, so
// the name survives a daemon restart). Client strings are cut short: they are the harness's
// to choose and status is for reading.
func (s *session) status() statusdoc.SessionStatus {
	st := s.SessionStatus
	if s.ss == nil {
		return st
	}
	if p := s.ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		st.ClientName, st.ClientVersion = clip(p.ClientInfo.Name), clip(p.ClientInfo.Version)
	}
	return st
}

// maxClientField bounds a clientInfo string in status.
const maxClientField = 128

func clip(s string) string {
	if len(s) <= maxClientField {
		return s
	}
	return strings.ToValidUTF8(s[:maxClientField], "") + "…"
}

// sessionReply is the reply that opens an MCP session: this daemon's version, its session
// protocol and the tools a shim may retry once after a crash (the reads: resmon's
// requires_confirmation false). The shim learns the table here, never by importing it.
func sessionReply() sessionwire.Reply {
	var reads []string
	for _, t := range tools.Tools {
		if !t.RequiresConfirmation {
			reads = append(reads, t.Name)
		}
	}
	return sessionwire.Reply{Resmongw: sessionwire.Protocol, OK: true, Version: version.Version,
		Session: sessionwire.SessionProtocol, ReadTools: reads}
}

// drain stops the session gracefully (lineConn.stop) and waits for it to end; the caller
// bounds the wait.
func (s *session) drain(mode stopMode) {
	if s.writes != nil {
		s.writes.Close() // the drain reads no more answers
	}
	if s.lc == nil {
		return
	}
	s.lc.stop(mode.String())
	<-s.ended
}
