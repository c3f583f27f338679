package mcpserver

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// Benchmarks of one tool call through the server and through the upstream.

// coreNopAPI answers every call at once, so a benchmark measures only the gateway's own work.
type coreNopAPI struct{}

func (coreNopAPI) Call(context.Context, *backend.Request) (any, error) {
	return map[string]any{"status": "ok", "version": "2.3.0"}, nil
}

// BenchmarkServerToolCall measures one tools/call through the MCP server and the wire wrapper
// (SDK client → in-memory pipe → server → handler → API double), and reports p50/p99.
func BenchmarkServerToolCall(b *testing.B) {
	tools := []tools.Tool{{Row: toolfacts.Row{Name: "health", Description: "d", InputSchema: map[string]any{"type": "object"}},
		Handler: func(ctx context.Context, api backend.API, args map[string]any) (any, error) {
			return api.Call(ctx, &backend.Request{Method: "GET", Path: "/api/health"})
		}}}
	ctx := context.Background()
	srv := NewServer(coreNopAPI{}, &ServerOptions{Tools: tools, OnCall: func(context.Context, CallRecord) {}})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, WrapTransport(st, tools), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "health", Arguments: map[string]any{"n": 1}}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkUpstreamCall measures one backend request through Upstream and Client against a
// local fake backend (HTTP keep-alive, JSON decode, identity-free read).
func BenchmarkUpstreamCall(b *testing.B) {
	f := backendtest.NewFake(b, nil)
	src := backendtest.NewSource()
	src.Set(f.Backend(), nil)
	u := backend.NewUpstream(src, nil)
	defer u.Close()
	ctx := context.Background()
	r := &backend.Request{Method: "GET", Path: "/api/health"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := u.Call(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}
