package shim

import (
	"encoding/json"
	"strconv"

	"github.com/resmongw/resmongw/sessionwire"
)

// Why the shim answers a request itself (the daemon that had it is gone).
const (
	// a write was started by a daemon that then died: it may or may not have happened
	whyUnknown = iota
	// a read was started by a daemon that then died, and it is not tried again
	whyReadLost
	// a read was tried on two daemons and both went away under it
	whyTriedTwice
	// the call was never started, and no daemon came back (or the daemon was stopped)
	whyNotSent
)

// Sentences, in the contract's style: what happened, what it means, what to do.
const (
	msgUnknown = "The resmongw daemon stopped while this call was in flight, so whether it took effect is unknown. " +
		"It was not sent again. Check the current state with a read tool before trying again."
	msgReadLost   = "The resmongw daemon stopped before answering this call. Try again."
	msgTriedTwice = "The resmongw daemon stopped twice while this call was in flight; it was not tried a third time. Try again."
	msgNotSent    = "The resmongw daemon is not running, so this call was not sent and nothing was done."
	msgStopped    = "The resmongw daemon was stopped ('resmongw stop'), so this call was not sent and nothing was done."
)

// errorAnswer is the answer the shim writes for c. A tools/call gets what every tool returns
// on failure (the contract's error model: a result with isError and the
// {"error","message","detail"} payload, code internal_error as for any failure of the server
// itself), so the model reads it like any tool error; other methods get a JSON-RPC error.
func errorAnswer(c *call, why int, stopped bool) []byte {
	msg, reason := msgUnknown, "DaemonStopped"
	switch {
	case why == whyReadLost:
		msg = msgReadLost
	case why == whyTriedTwice:
		msg = msgTriedTwice
	case why == whyNotSent && stopped:
		msg, reason = msgStopped, "DaemonStoppedByUser"
	case why == whyNotSent:
		msg, reason = msgNotSent, "DaemonUnavailable"
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), c.id...)
	if c.method != "tools/call" {
		m, _ := json.Marshal(msg)
		b = append(b, `,"error":{"code":-32603,"message":`...)
		b = append(b, m...)
		return append(b, "}}\n"...)
	}
	payload, _ := json.Marshal(map[string]any{"error": "internal_error", "message": msg,
		"detail": map[string]any{"reason": reason, "sent_again": false}})
	text, _ := json.Marshal(string(payload))
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	b = append(b, text...)
	return append(b, `}],"isError":true}}`+"\n"...)
}

// replayID is the id of an initialize the shim replays on a new daemon; its answer is ours
// and never reaches the harness. The counter keeps it unique per connection.
func replayID(epoch int) []byte {
	return []byte(`"resmongw-replay-` + strconv.Itoa(epoch) + `"`)
}

// withID is a request line with its id replaced (the harness's initialize, replayed).
func withID(line, id []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}

// dupAnswers is the refusals owed to the requests that reused c's id while it was in flight,
// in the daemon's words (the daemon that had them can no longer answer them).
func dupAnswers(c *call) [][]byte {
	var out [][]byte
	for range c.dups {
		b := append([]byte(`{"jsonrpc":"2.0","id":`), c.id...)
		out = append(out, append(b, `,"error":{"code":-32600,"message":"`+sessionwire.MsgIDInFlight+`"}}`+"\n"...))
	}
	return out
}
