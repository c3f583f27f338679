package backend_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/backend"
)

const (
	testBase     = "http://127.0.0.1:8791"
	testExpected = "3f0c6a0e-8a0b-4e53-9d0f-2c5b1a7e9d41"
	testActual   = "9b2f4c1d-5e6a-4b7c-8d9e-0f1a2b3c4d5e"
)

func TestMapStatus(t *testing.T) {
	guard403Host := `{"detail":{"reason":"host_refused","message":"resmon answers only requests addressed to 127.0.0.1 or localhost on its own port."}}`
	guard403Origin := `{"detail":{"reason":"origin_refused","message":"resmon answers browser requests only from its own window."}}`
	guard401 := `{"detail":{"reason":"token_invalid","message":"The local backend.API token on this request is not this resmon's."}}`
	mismatch := `{"detail":{"code":"instance_mismatch","message":"This request reached a different running app.","expected_runtime_id":"` +
		testExpected + `","actual_runtime_id":"` + testActual + `"}}`
	list422 := `{"detail":[{"type":"int_parsing","loc":["path","exec_id"],"msg":"Input should be a valid integer","input":"abc"}]}`
	empty := map[string]any{}

	cases := []struct {
		name     string
		status   int
		header   http.Header
		body     string
		expected string
		code     string
		message  string
		detail   map[string]any
		gone     bool
	}{
		{"400 string", 400, nil, `{"detail":"Unknown export format 'x'."}`, "", backend.CodeInvalidArgument, "Unknown export format 'x'.", empty, false},
		{"400 object", 400, nil, `{"detail":{"reason":"r","message":"m"}}`, "", backend.CodeInvalidArgument, backend.MsgRejected, empty, false},
		{"400 empty string", 400, nil, `{"detail":""}`, "", backend.CodeInvalidArgument, backend.MsgRejected, empty, false},
		{"401 guard", 401, nil, guard401, "", backend.CodeBackendUnavailable, backend.MsgTokenRefused, map[string]any{"tried": []string{testBase}}, true},
		{"401 string", 401, nil, `{"detail":"nope"}`, "", backend.CodeBackendUnavailable, backend.MsgTokenRefused, map[string]any{"tried": []string{testBase}}, true},
		{"403 host", 403, nil, guard403Host, "", backend.CodeInternalError, backend.MsgUnexpected, empty, false},
		{"403 origin", 403, nil, guard403Origin, "", backend.CodeInternalError, backend.MsgUnexpected, empty, false},
		{"403 string", 403, nil, `{"detail":"Forbidden here"}`, "", backend.CodeInternalError, "Forbidden here", empty, false},
		{"404 string", 404, nil, `{"detail":"Routine not found"}`, "", backend.CodeNotFound, "Routine not found", empty, false},
		{"404 framework", 404, nil, `{"detail":"Not Found"}`, "", backend.CodeNotFound, "Not Found", empty, false},
		{"404 object", 404, nil, `{"detail":{"code":"x"}}`, "", backend.CodeNotFound, backend.MsgNotFound, empty, false},
		{"404 no body", 404, nil, ``, "", backend.CodeNotFound, backend.MsgNotFound, empty, false},
		{"404 html", 404, nil, `<html>nope</html>`, "", backend.CodeNotFound, backend.MsgNotFound, empty, false},
		{"405 string", 405, nil, `{"detail":"Method Not Allowed"}`, "", backend.CodeInternalError, "Method Not Allowed", empty, false},
		{"405 none", 405, nil, `{}`, "", backend.CodeInternalError, backend.MsgUnexpected, empty, false},
		{"409 plain", 409, nil, `{"detail":"Execution 7 is running; only an interrupted, failed or cancelled run can be restarted."}`, "",
			backend.CodeConflict, "Execution 7 is running; only an interrupted, failed or cancelled run can be restarted.", empty, false},
		{"409 plain with expectation", 409, nil, `{"detail":"Busy"}`, testExpected, backend.CodeConflict, "Busy", empty, false},
		{"409 object without expectation", 409, nil, mismatch, "", backend.CodeConflict, backend.MsgConflict, empty, false},
		{"409 other code with expectation", 409, nil, `{"detail":{"code":"other","message":"x"}}`, testExpected, backend.CodeConflict, backend.MsgConflict, empty, false},
		{"409 instance_mismatch with expectation", 409, nil, mismatch, testExpected, backend.CodeInstanceMismatch, backend.MsgInstanceMismatch,
			map[string]any{"expected_runtime_id": testExpected, "actual_runtime_id": testActual}, false},
		{"409 routine already running", 409,
			http.Header{"X-Resmon-Conflict": {"routine_already_running"}, "X-Resmon-Execution-Id": {"41"}},
			`{"detail":"This routine is already running as execution 41. Wait for that run to finish, or cancel it, before starting another."}`, "",
			backend.CodeConflict, "This routine is already running as execution 41. Wait for that run to finish, or cancel it, before starting another.",
			map[string]any{"conflict": "routine_already_running", "execution_id": int64(41)}, false},
		{"409 routine already running without id", 409,
			http.Header{"X-Resmon-Conflict": {"routine_already_running"}, "X-Resmon-Execution-Id": {""}},
			`{"detail":"This routine is already running. Wait for that run to finish, or cancel it, before starting another."}`, "",
			backend.CodeConflict, "This routine is already running. Wait for that run to finish, or cancel it, before starting another.",
			map[string]any{"conflict": "routine_already_running", "execution_id": nil}, false},
		{"422 string", 422, nil, `{"detail":"expected_runtime_id must be a canonical lowercase UUID4"}`, testExpected,
			backend.CodeInvalidArgument, "expected_runtime_id must be a canonical lowercase UUID4", empty, false},
		{"422 list", 422, nil, list422, "", backend.CodeInvalidArgument, backend.MsgRejected, empty, false},
		{"429 string", 429, http.Header{"Retry-After": {"5"}}, `{"detail":"resmon is already running the maximum of 3 concurrent executions."}`, "",
			backend.CodeConflict, "resmon is already running the maximum of 3 concurrent executions.", empty, false},
		{"429 none", 429, nil, `{"detail":null}`, "", backend.CodeConflict, backend.MsgExecutionLimit, empty, false},
		{"500 string", 500, nil, `{"detail":"database is locked"}`, "", backend.CodeUpstreamError, "database is locked", empty, false},
		{"500 text", 500, nil, `Internal Server Error`, "", backend.CodeUpstreamError, backend.MsgUpstream, empty, false},
		{"502 none", 502, nil, ``, "", backend.CodeUpstreamError, backend.MsgUpstream, empty, false},
		{"503 object", 503, nil, `{"detail":{"reason":"x","message":"y"}}`, "", backend.CodeUpstreamError, backend.MsgUpstream, empty, false},
		{"418 other", 418, nil, `{"detail":"teapot"}`, "", backend.CodeInternalError, "teapot", empty, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			e := backend.MapStatus(tc.status, h, []byte(tc.body), tc.expected, testBase)
			if e.Code != tc.code || e.Message != tc.message {
				t.Fatalf("got %q %q, want %q %q", e.Code, e.Message, tc.code, tc.message)
			}
			if !reflect.DeepEqual(e.Detail, tc.detail) {
				t.Fatalf("detail = %#v, want %#v", e.Detail, tc.detail)
			}
			if e.BackendGone != tc.gone || e.Sent {
				t.Fatalf("BackendGone=%v Sent=%v, want %v false", e.BackendGone, e.Sent, tc.gone)
			}
		})
	}
}

func TestWriteInterruptedKeepsDetail(t *testing.T) {
	cause := backend.TransportError(testBase, "ReadError", true)
	e := backend.WriteInterrupted(cause)
	if e.Code != backend.CodeBackendUnavailable || e.Message != backend.MsgWriteInterrupted || e.BackendGone {
		t.Fatalf("got %+v", e)
	}
	if !reflect.DeepEqual(e.Detail["tried"], []string{testBase}) || e.Detail["reason"] != "ReadError" {
		t.Fatalf("detail = %v", e.Detail)
	}
	// The cause's detail is copied, not shared.
	e.Detail["x"] = 1
	if _, ok := cause.Detail["x"]; ok {
		t.Fatal("detail map shared with the cause")
	}
}

func TestMsgTooLargeNamesTheBound(t *testing.T) {
	if got := backend.MsgTooLarge(32 << 20); !strings.Contains(got, "32 MiB") {
		t.Fatalf("%q", got)
	}
	if got := backend.MsgTooLarge(1000); !strings.Contains(got, "1000 bytes") {
		t.Fatalf("%q", got)
	}
}
