package e2e

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/resmonsim"
)

// Issue 10 item 7: eight concurrent 31 MiB answers took the daemon to 1.76 GB. Now each is an
// upstream_error naming the bound, the daemon's resident size stays within a small multiple
// of the bound, and the session goes on.
func TestFaultOversizedAnswersKeepTheDaemonSmall(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)

	big := `{"executions":["` + strings.Repeat("x", 31<<20) + `"]}`
	sim.SetFault(resmonsim.Fault{PathPrefix: "/api/executions", Status: 200, Body: big})
	results := make([]result, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.call(ctx, "list_executions", nil)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code() != backend.CodeUpstreamError || r.payload["message"] != backend.MsgTooLarge(backend.DefaultMaxResponseBytes) {
			t.Fatalf("answer %d: %q %v", i, r.code(), r.payload)
		}
	}
	// Eight answers read up to the 4 MiB bound at most, on top of the daemon's ~20 MiB.
	const limit = 100 << 20
	if rss := vmRSS(t, w.daemonPID()); rss > limit {
		t.Fatalf("daemon VmRSS %d MiB after eight oversized answers, want under %d MiB", rss>>20, limit>>20)
	}
	sim.ClearFaults()
	s.must(ctx, "list_executions", nil)
}

func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && len(f) == 2 {
				return n << 10
			}
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
