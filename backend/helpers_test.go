package backend_test

import (
	"net"
	"net/http"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
)

// coreDeadPort returns a loopback port nothing listens on (it was free a moment ago).
func coreDeadPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return p
}

// coreToolErr asserts err is a *ToolError and returns it.
func coreToolErr(t *testing.T, err error) *backend.ToolError {
	t.Helper()
	te, ok := err.(*backend.ToolError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ToolError", err, err)
	}
	return te
}

// coreDropper answers every request by dropping the connection, like a backend killed
// mid-request.
func coreDropper(w http.ResponseWriter, r *http.Request) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// coreEventually waits (bounded) for cond, for effects that happen on another goroutine.
func coreEventually(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, backendtest.Timeout, cond, "the condition")
}

// The doubles and the real types satisfy the interfaces the code uses.
var (
	_ discovery.Source = (*backendtest.Source)(nil)
	_ backend.API      = (*backend.Upstream)(nil)
	_ backend.API      = (*backend.Client)(nil)
)
