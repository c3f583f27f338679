package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/tools"
)

// documentedCodes is the contract's error model (six codes plus the two v2.3 identity codes).
var documentedCodes = map[string]bool{
	backend.CodeBackendUnavailable: true, backend.CodeNotFound: true, backend.CodeInvalidArgument: true, backend.CodeConflict: true,
	backend.CodeUpstreamError: true, backend.CodeInternalError: true, backend.CodeIdentityUnavailable: true, backend.CodeInstanceMismatch: true,
}

// checkOutcome fails unless a handler's result is a JSON-encodable payload or an error the
// server turns into a documented code. Tools are called through Tool.Run, without runTool's
// recover, so a panic fails the fuzz run instead of hiding as internal_error.
func checkOutcome(t *testing.T, tool string, v any, err error) {
	t.Helper()
	if err != nil {
		var te *backend.ToolError
		if errors.As(err, &te) && te != nil {
			if !documentedCodes[te.Code] || te.Message == "" {
				t.Fatalf("%s: undocumented error %q %q", tool, te.Code, te.Message)
			}
			if _, jerr := encodePayload(errorPayload(te)); jerr != nil {
				t.Fatalf("%s: error detail does not encode: %v", tool, jerr)
			}
		}
		return // any other error is the reference's internal_error
	}
	if _, jerr := encodePayload(v); jerr != nil {
		t.Fatalf("%s: payload does not encode: %v", tool, jerr)
	}
}

// cannedAPI answers every request with one fixed JSON value and counts the requests.
type cannedAPI struct {
	answer any
	n      int
}

func (a *cannedAPI) Call(context.Context, *backend.Request) (any, error) {
	a.n++
	return a.answer, nil
}

// FuzzToolArguments: any arguments object (wrong types, negative or huge limits, malformed
// cursors and ids, unicode) given to any tool of the table gives a payload or a documented
// error, never a panic; arguments that are not an object, or that the tool's schema refuses,
// are refused before any request.
func FuzzToolArguments(f *testing.F) {
	answer := map[string]any{"status": "ok", "version": "2.3.0", "items": []any{}, "total": json.Number("0")}
	f.Fuzz(func(t *testing.T, toolIdx uint8, raw []byte) {
		tool := &tools.Tools[int(toolIdx)%len(tools.Tools)]
		api := &cannedAPI{answer: answer}
		args, terr := decodeArgs(raw)
		if terr != nil {
			if terr.Code != backend.CodeInvalidArgument {
				t.Fatalf("bad arguments gave %q", terr.Code)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := tool.Run(ctx, api, args)
		checkOutcome(t, tool.Name, v, err)
		if tools.CheckArguments(tool.Name, tool.InputSchema, args) != nil && api.n != 0 {
			t.Fatalf("%s: arguments the schema refuses still sent %d request(s)", tool.Name, api.n)
		}
	})
}

// FuzzBackendResponse: whatever a backend answers (any status, truncated or non-JSON bodies,
// wrong types), the real client and every tool turn it into a payload or a documented error.
func FuzzBackendResponse(f *testing.F) {
	var (
		status int
		ctype  string
		body   []byte
	)
	srv, port := testkit.ServeLoopback(f, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	f.Cleanup(srv.Close)
	client := backend.NewClient(&discovery.Backend{BaseURL: srv.URL, Port: port, Token: discovery.Token(strings.Repeat("t", 43))},
		&backend.ClientOptions{RequestTimeout: 5 * time.Second})
	f.Cleanup(client.Close)
	ctypes := []string{"application/json", "", "text/plain; charset=utf-8", "application/x-bibtex", "application/json; charset=utf-8"}

	// One fuzz worker runs inputs one at a time, so the handler's captured answer is stable.
	f.Fuzz(func(t *testing.T, toolIdx uint8, st uint16, ct uint8, answer []byte) {
		tool := &tools.Tools[int(toolIdx)%len(tools.Tools)]
		status = 200 + int(st)%400 // 200–599
		if status == 204 || status == 304 {
			status = 200 // no body allowed
		}
		ctype = ctypes[int(ct)%len(ctypes)]
		body = answer
		args := maps.Clone(tool.Example) // accepted by the tool's schema, so the answer is what is fuzzed
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := tool.Run(ctx, client, args)
		checkOutcome(t, tool.Name, v, err)
		var te *backend.ToolError
		if errors.As(err, &te) && te.Code == backend.CodeBackendUnavailable && !te.BackendGone {
			t.Fatalf("%s: backend_unavailable from a live backend answering %d: %s", tool.Name, status, te.Message)
		}
	})
}
