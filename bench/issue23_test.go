package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestIssue23Verdicts(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	r := &Report{
		Compare: &CompareResult{Calls: 10, Direct: Summary{N: 10, P50: 100 * us, P99: 400 * us},
			Paths: []PathResult{{Side: "after", Mode: PathShimRaw, Added: Summary{N: 10, P50: 150 * us, P99: 700 * us}}}},
		Spaced:   []ColdPairResult{{Gap: time.Second, Side: "after", Added: Summary{N: 5, P50: 600 * us}}},
		Sessions: []SessionsResult{{Side: "after", Sessions: 8, CallsPerSec: 4000, Shim: Mem{Private: 1 << 20}}},
		Issue23: &Issue23{
			Spawn:     SpawnResult{Shim: Summary{N: 3, P50: 4 * ms}, Bare: Summary{N: 3, P50: ms}, Ratio: 4},
			Autostart: Summary{N: 3, P50: 12 * ms},
			Floor:     FloorResult{Calls: 10, DaemonCPU: 150 * us, FloorCPU: 100 * us, Ratio: 1.5},
			Idle:      IdleResult{Sessions: 8, Window: 10 * time.Second, Daemon: 31},
			Idle1000:  &ScaleResult{Sessions: 1000, RSSIdle: 40 << 20},
		},
	}
	var sb strings.Builder
	r.Markdown(&sb)
	md := sb.String()
	for _, want := range []string{
		"| ≤ 3× | 4.0× **missed** |",        // spawn ratio
		"| ≤ 15.0 ms | met |",               // autostart
		"| 1.0 MiB | — | ≤ 1.5 MiB | met |", // shim memory
		"| 150 µs | direct net/http: 100 µs | ≤ 200 µs | met |",
		"| 700 µs | direct p99: 400 µs | ≤ 600 µs | **missed** |",
		"calls 1s apart, both equally cold (5 pairs; p99 0 µs) | 600 µs |",
		"| ≤ 1.6× | 1.50× met |",
		"| 4000 | — | reported |",
		"| 40.0 MiB (before 0.0 MiB) | — | ≤ 64.0 MiB | met |",
		"| 31 | — | ≤ 30 | **missed** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestContextSwitchesCountsThisProcess(t *testing.T) {
	n, err := ContextSwitches(os.Getpid())
	if err != nil {
		t.Skipf("no /proc task status: %v", err)
	}
	if n <= 0 {
		t.Fatalf("context switches of a running test process = %d, want > 0", n)
	}
}
