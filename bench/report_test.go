package bench

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdownVerdicts(t *testing.T) {
	us := time.Microsecond
	r := &Report{
		Machine: Machine{CPUs: 2, Model: "test cpu", Go: "go1.x", Kernel: "k"},
		When:    time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
		Command: "go run ./bench/cmd/benchtable",
		Overhead: []ModeResult{
			{Mode: ModeDirect, Summary: Summary{N: 10, P50: 40 * us, P99: 300 * us, Mean: 50 * us}},
			{Mode: ModeShim, Summary: Summary{N: 10, P50: 150 * us, P99: 2500 * us, Mean: 250 * us}, DaemonCPU: 300 * us,
				DaemonAlloc: 200 << 10, DaemonAllocCalls: 1000, DaemonGCs: 50},
			{Mode: ModeSocketRaw, Summary: Summary{N: 10, P50: 90 * us, P99: 900 * us, Mean: 150 * us}},
			{Mode: ModeShimRaw, Summary: Summary{N: 10, P50: 120 * us, P99: 1500 * us, Mean: 200 * us}},
		},
		Cold:      &Summary{N: 3, P50: 5 * time.Millisecond},
		Autostart: &Summary{N: 3, P50: 250 * time.Millisecond},
		Swaps:     []SwapResult{{Summary: Summary{N: 2, P50: 30 * time.Millisecond, Max: 60 * time.Millisecond}}},
		Scale:     []ScaleResult{{Sessions: 100, ViaShim: true, RSSBefore: 10 << 20, RSSIdle: 20 << 20, ShimRSS: 4 << 20, ShimAnon: 1 << 20}},
		Sizes:     []ToolSize{{Tool: "small", Bytes: 100}, {Tool: "big", Args: `{"a":1}`, Bytes: BudgetBytes + 1}},
	}
	var sb strings.Builder
	r.Markdown(&sb)
	md := sb.String()
	for _, want := range []string{
		"2 × test cpu",
		"Produced by: `go run ./bench/cmd/benchtable`",
		"raw JSON-RPC client, as a harness, minus the baseline): added p50 < 100 µs: met (80 µs); added p99 < 1000 µs: **missed** (1200 µs)", // raw full path
		"(its own cost included): added p50 < 100 µs: **missed** (110 µs)",                                                                   // go-sdk full path: 150 − 40
		"go-sdk p50 − raw p50): 30 µs",
		"socket raw p50): 30 µs",
		"| 300 µs | 200 KiB ± 26 KiB (50) | — |", // 50 cycles × ½ MiB over 1000 calls
		"| daemon already running | 3 | 5000 µs",
		"p50 < 200.0 ms | **missed** |",
		"max < 100.0 ms | met |",
		"| 102.4 KiB | 4.0 MiB (1.0 MiB) |", // (20−10) MiB / 100 sessions
		"daemon RSS < 50.0 MiB with 100 idle sessions: met",
		"| big | `{\"a\":1}` | 8193 | 2048 | **yes** |",
		"| small | — | 100 | 25 |  |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestCodeSpanHoldsBackticks(t *testing.T) {
	if got := codeSpan("a b"); got != "`a b`" {
		t.Errorf("plain: %s", got)
	}
	if got := codeSpan("x -note 'the `bin`'"); got != "`` x -note 'the `bin`' ``" {
		t.Errorf("with backticks: %s", got)
	}
}
