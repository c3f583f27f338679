package sessionwire

import (
	"bytes"
	"encoding/json"
)

// The session protocol: what lets a harness session outlive the daemon process serving it
// (issue 12). Both sides announce the version they speak (Preamble.Session, Reply.Session)
// and use the lower one, so an older shim or daemon on the other end simply means "no
// goodbye": the shim then treats every end of the stream as a crash, which still reconnects.
//
// Version 1:
//   - The daemon's reply names the read tools (Reply.ReadTools): a tools/call of one of them
//     may be sent once more after a crash; any other tool's may not.
//   - A daemon that stops on purpose stops reading calls, answers every call it had started
//     (within its drain bound), then writes one Goodbye line and closes. Every request it did
//     not answer and does not list in Goodbye.Abandoned it never started, so the shim sends
//     those to the next daemon; those it lists were started and their outcome is unknown.
const SessionProtocol = 1

// MsgIDInFlight is the JSON-RPC Invalid Request (-32600) message of a request whose id is
// already used by a request in flight on the session: the daemon answers such a request with
// it at once, and a shim whose daemon went away answers those still owed in the same words.
const MsgIDInFlight = "Invalid Request: this id is already used by a request in flight"

// Goodbye modes.
const (
	GoodbyeRestart = "restart" // another daemon follows: reconnect and go on
	GoodbyeStop    = "stop"    // the person stopped the daemon (`resmongw stop`): end the session
)

// Goodbye is the daemon's last line on a session that speaks the session protocol. It is no
// JSON-RPC message (it has no "jsonrpc" member), and the shim never forwards it.
type Goodbye struct {
	Resmongw string `json:"resmongw"` // always "goodbye"
	Mode     string `json:"mode"`
	// Abandoned are the ids (as JSON) of requests the daemon started and did not answer
	// within its drain bound.
	Abandoned []json.RawMessage `json:"abandoned,omitempty"`
}

// goodbyePrefix starts every goodbye line (json.Marshal keeps field order).
var goodbyePrefix = []byte(`{"resmongw":"goodbye"`)

// GoodbyeLine is the goodbye of mode listing abandoned, as one line.
func GoodbyeLine(mode string, abandoned []json.RawMessage) []byte {
	return Line(Goodbye{Resmongw: "goodbye", Mode: mode, Abandoned: abandoned})
}

// ParseGoodbye reports whether line is a goodbye, and which. Every line a daemon writes to a
// shim passes here, and one that is not a goodbye costs no allocation (the decode, whose value
// escapes, is only reached past the prefix).
func ParseGoodbye(line []byte) (Goodbye, bool) {
	if !bytes.HasPrefix(line, goodbyePrefix) {
		return Goodbye{}, false
	}
	return decodeGoodbye(line)
}

func decodeGoodbye(line []byte) (Goodbye, bool) {
	var g Goodbye
	if json.Unmarshal(line, &g) != nil || g.Resmongw != "goodbye" {
		return Goodbye{}, false
	}
	return g, true
}
