package daemon

import (
	"bytes"
	"encoding/json"
	"testing"
)

// wireScanCases are frames whose top level the scan must read exactly as json.Unmarshal does,
// or hand back to it: repeated keys, other letter cases, escaped keys, nesting, whitespace.
var wireScanCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health","arguments":{}}}`,
	`{ "jsonrpc" : "2.0" , "id" : "a\"b" , "method" : "x" , "params" : [1,{"}":"]"},"\\"] }`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","i\u0064":7,"method":"ping"}`,
	`{"jſonrpc":"2.0","id":7,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":5,"result":{"a":[true,false,null,-1.5e3]},"error":null}`,
	`{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"m"},"other":{"id":9}}`,
	`{}`,
	"{\t\"method\"\r\n:\"m\"}",
}

// The scan of a frame's top level gives what json.Unmarshal gives, whenever it does not defer
// to it.
func TestWireScanMatchesUnmarshal(t *testing.T) {
	for _, in := range wireScanCases {
		checkWireScan(t, []byte(in))
	}
}

// A key encoding/json could read as one of the fields is left to encoding/json.
func TestWireScanDefersOnKeysThatNeedDecoding(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","i\u0064":7,"method":"ping"}`,
		`{"jſonrpc":"2.0","id":7,"method":"ping"}`,
		`{"Method":"x"}`,
	} {
		if _, ok := scanWireMessage([]byte(in)); ok {
			t.Errorf("%s: scanned, want it left to encoding/json", in)
		}
	}
}

// The values decodeFrame keeps do not share the line buffer the next frame is read into.
func TestDecodeFrameKeepsNoViewOfTheLine(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health"}}`)
	msg, reply := decodeFrame(line)
	if reply != nil {
		t.Fatalf("refused: %s", reply)
	}
	for i := range line {
		line[i] = 'x'
	}
	got, _ := json.Marshal(msg)
	if !bytes.Contains(got, []byte(`{"name":"health"}`)) {
		t.Fatalf("params changed with the line buffer: %s", got)
	}
}

func checkWireScan(t *testing.T, frame []byte) {
	t.Helper()
	if !json.Valid(frame) || len(frame) == 0 || frame[0] != '{' {
		return
	}
	var want wireMessage
	if err := json.Unmarshal(frame, &want); err != nil {
		return
	}
	got, ok := scanWireMessage(bytes.Clone(frame))
	if !ok {
		return // decodeFrame then decodes it with encoding/json
	}
	for _, f := range [][3]any{
		{"jsonrpc", got.JSONRPC, want.JSONRPC}, {"id", got.ID, want.ID}, {"method", got.Method, want.Method},
		{"params", got.Params, want.Params}, {"result", got.Result, want.Result}, {"error", got.Error, want.Error},
	} {
		g, w := f[1].(json.RawMessage), f[2].(json.RawMessage)
		if !bytes.Equal(g, w) || (g == nil) != (w == nil) {
			t.Errorf("%s: %s is %q, json.Unmarshal %q", frame, f[0], g, w)
		}
	}
}

func FuzzWireScan(f *testing.F) {
	for _, in := range wireScanCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, frame []byte) { checkWireScan(t, frame) })
}
