package daemon

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/statusdoc"
)

// latencyWindow is how many recent calls per tool the percentiles are computed over: a fixed
// ring, so recording is O(1) and memory is bounded however long the daemon runs.
const latencyWindow = 512

// maxTrackedTools caps the per-tool entries of one target (each holds a 4 KiB ring). The MCP server
// already records every unknown name under mcpserver.UnknownTool; this is the second fence, should
// a name ever come from anywhere else.
const maxTrackedTools = 256

// toolStats accumulates one tool's calls on one target.
type toolStats struct {
	calls         uint64
	errors        map[string]uint64
	ring          [latencyWindow]time.Duration
	n             int // filled slots
	next          int
	lastRuntimeID string
	lastAt        time.Time
}

// callStats is every tool's stats for one target.
type callStats struct {
	mu    sync.Mutex
	tools map[string]*toolStats
}

func newCallStats() *callStats { return &callStats{tools: map[string]*toolStats{}} }

// record adds one call. code is "" on success.
func (s *callStats) record(tool, code, runtimeID string, d time.Duration, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tools[tool]
	if t == nil && len(s.tools) >= maxTrackedTools {
		tool = mcpserver.UnknownTool
		t = s.tools[tool]
	}
	if t == nil {
		t = &toolStats{errors: map[string]uint64{}}
		s.tools[tool] = t
	}
	t.calls++
	if code != "" {
		t.errors[code]++
	}
	t.ring[t.next] = d
	t.next = (t.next + 1) % latencyWindow
	if t.n < latencyWindow {
		t.n++
	}
	if runtimeID != "" {
		t.lastRuntimeID = runtimeID
	}
	t.lastAt = at
}

func (s *callStats) snapshot() []statusdoc.ToolStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]statusdoc.ToolStatus, 0, len(s.tools))
	for name, t := range s.tools {
		lat := slices.Clone(t.ring[:t.n])
		slices.Sort(lat)
		ts := statusdoc.ToolStatus{
			Tool: name, Calls: t.calls, P50Millis: millis(percentile(lat, 50)), P99Millis: millis(percentile(lat, 99)),
			LastRuntimeID: t.lastRuntimeID, LastCall: t.lastAt,
		}
		if len(t.errors) > 0 {
			ts.Errors = make(map[string]uint64, len(t.errors))
			for k, v := range t.errors {
				ts.Errors[k] = v
			}
		}
		out = append(out, ts)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// percentile is the nearest-rank percentile of sorted samples (0 for none).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
