package shim

import "testing"

// The lines the shim reads per call: a harness's tools/call and the daemon's answer.
var (
	benchRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"health","arguments":{},"_meta":{"progressToken":42}}}` + "\n")
	benchAnswer  = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"{\"status\":\"ok\",\"version\":\"2.3.0\",\"runtime_id\":\"4f6c2a9e-1b7d-4c1e-9a43-0d2f5b8e6c71\",\"uptime_s\":1234,\"db\":\"ok\",\"workers\":{\"busy\":0,\"idle\":4}}"}],"structuredContent":{"status":"ok","version":"2.3.0","runtime_id":"4f6c2a9e-1b7d-4c1e-9a43-0d2f5b8e6c71","uptime_s":1234,"db":"ok","workers":{"busy":0,"idle":4}},"isError":false}}` + "\n")
)

// BenchmarkScanMessage is what the shim spends reading one call's two lines.
func BenchmarkScanMessage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if m, ok := scanMessage(benchRequest); !ok || m.method != "tools/call" {
			b.Fatal(m, ok)
		}
		if m, ok := scanMessage(benchAnswer); !ok || !m.response {
			b.Fatal(m, ok)
		}
	}
}
