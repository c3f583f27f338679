package daemon

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one harness connection serving MCP.
type session struct {
	SessionStatus
	ss *mcp.ServerSession
}

// status is the session as status shows it: clientInfo is read from the SDK's session each
// time (it holds what initialize said, and a shim that reconnected replays initialize, so
// the name survives a daemon restart). Client strings are cut short: they are the harness's
// to choose and status is for reading.
func (s *session) status() SessionStatus {
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
