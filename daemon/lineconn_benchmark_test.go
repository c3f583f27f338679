package daemon

import "testing"

// BenchmarkDecodeFrame is the daemon's own work on one tools/call line before the SDK's.
func BenchmarkDecodeFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"health","arguments":{},"_meta":{"progressToken":42}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, reply := decodeFrame(frame); reply != nil {
			b.Fatal(string(reply))
		}
	}
}
