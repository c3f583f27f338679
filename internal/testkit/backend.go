package testkit

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// NewToken mints a token as resmon does: 32 random bytes, URL-safe base64 without padding.
func NewToken(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewRuntimeID mints a canonical lowercase UUID4, as a resmon instance names itself.
func NewRuntimeID(t testing.TB) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ServeLoopback starts an HTTP server for h on 127.0.0.1:port (0 for any free port), never on
// another interface; starting again on a port just freed is what a backend restart looks
// like. It returns the server, which the caller closes, and its port.
func ServeLoopback(t testing.TB, port int, h http.Handler) (*httptest.Server, int) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv, ln.Addr().(*net.TCPAddr).Port
}
