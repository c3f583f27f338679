package backend

import "net/http"

// The internals the package's external tests read (they are package backend_test, since
// backendtest, which they share with the tools' and the server's tests, imports backend).
var (
	TransportError    = transportError
	WriteInterrupted  = writeInterrupted
	RestartGrace      = restartGrace
	ReasonReadTimeout = reasonReadTimeout
)

// HTTPClientOf is c's pooled client, whose transport the connection tests inspect.
func HTTPClientOf(c *Client) *http.Client { return c.http }
