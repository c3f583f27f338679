package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Machine describes where a report was measured.
type Machine struct {
	CPUs   int
	Model  string
	Go     string
	Kernel string
}

// ThisMachine reads the CPU count, model and kernel of the running machine.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Model: "unknown", Kernel: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// Report is one run of every measurement; a nil or empty section was skipped.
type Report struct {
	Machine Machine
	When    time.Time
	Command string
	Note    string // free text printed under the command (e.g. which binary was measured)
	// LoadBefore and LoadAfter are the first three fields of /proc/loadavg at the start and
	// the end of the run: how busy the shared machine was.
	LoadBefore, LoadAfter string
	Overhead              []ModeResult // first is the baseline, last the full path
	Cold                  *Summary
	Autostart             *Summary
	Swaps                 []SwapResult
	Scale                 []ScaleResult
	Sizes                 []ToolSize
	// Compare, Spaced and Sessions are the same-run before/after measurements (issue 12 B).
	Compare  *CompareResult
	Spaced   []ColdPairResult
	Sessions []SessionsResult
	// Issue23 is issue 23 item 5's figures (with Compare and Sessions).
	Issue23 *Issue23
}

// Targets of issue 7.
const (
	TargetAddedP50  = 100 * time.Microsecond
	TargetAddedP99  = time.Millisecond
	TargetCold      = 10 * time.Millisecond
	TargetAutostart = 200 * time.Millisecond
	TargetSwap      = 100 * time.Millisecond
	TargetRSS100    = 50 << 20
)

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// Dur formats a duration for a table: µs below 10 ms, ms above.
func Dur(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

// MiB formats a byte count.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Markdown writes the report as Markdown tables.
func (r *Report) Markdown(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Measured %s on %d × %s (Linux %s), %s.", r.When.UTC().Format("2006-01-02 15:04 MST"), r.Machine.CPUs, r.Machine.Model, r.Machine.Kernel, r.Machine.Go)
	if r.LoadBefore != "" {
		p(" Load average (1, 5, 15 min) before the run: %s; after: %s.", r.LoadBefore, r.LoadAfter)
	}
	p("\n\n")
	if r.Command != "" {
		p("Produced by: %s\n\n", codeSpan(r.Command))
	}
	if r.Note != "" {
		p("%s\n\n", r.Note)
	}

	if r.Issue23 != nil {
		r.issue23Markdown(p)
	}
	if r.Compare != nil {
		r.compareMarkdown(p)
	}
	if len(r.Overhead) > 1 {
		r.overheadMarkdown(p)
	}

	if r.Cold != nil || r.Autostart != nil {
		p("### 2. Cold start (`resmongw stdio` process start → initialize result)\n\n")
		p("| case | runs | p50 | p99 | max | target | verdict |\n|---|---:|---:|---:|---:|---:|---|\n")
		if c := r.Cold; c != nil {
			p("| daemon already running | %d | %s | %s | %s | p50 < %s | %s |\n", c.N, Dur(c.P50), Dur(c.P99), Dur(c.Max), Dur(TargetCold), verdict(c.P50 < TargetCold))
		}
		if a := r.Autostart; a != nil {
			p("| autostart (no daemon; the shim starts one) | %d | %s | %s | %s | p50 < %s | %s |\n", a.N, Dur(a.P50), Dur(a.P99), Dur(a.Max), Dur(TargetAutostart), verdict(a.P50 < TargetAutostart))
		}
		p("\n")
	}

	if len(r.Swaps) > 0 {
		p("### 3. Swap latency (backend restart, files written temp+rename → first successful call on the new backend, through the shim)\n\n")
		p("| restart | runs | p50 | p99 | max | failed calls before success (total) | target | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, s := range r.Swaps {
			kind := "same port, new token"
			if s.NewPort {
				kind = "new port, new token"
			}
			p("| %s | %d | %s | %s | %s | %d | max < %s | %s |\n", kind, s.N, Dur(s.P50), Dur(s.P99), Dur(s.Max), s.FailedCalls, Dur(TargetSwap), verdict(s.Max < TargetSwap))
		}
		for _, s := range r.Swaps {
			if s.FirstFailure != "" {
				p("\nFirst failed call (new port: %v): `%s`\n", s.NewPort, strings.ReplaceAll(s.FirstFailure, "`", "'"))
			}
		}
		p("\n")
	}

	if len(r.Scale) > 0 {
		p("### 4. Scale (every session calls `health` back to back)\n\n")
		p("| sessions | via | open all | calls/s | p50 | p99 | errors | daemon RSS before | idle | under load | growth per idle session | shim RSS (private) |\n")
		p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Scale {
			via, shim := "direct socket + preamble", "—"
			if s.ViaShim {
				via, shim = "shim processes", MiB(s.ShimRSS)+" ("+MiB(s.ShimAnon)+")"
			}
			p("| %d | %s | %s | %.0f | %s | %s | %d | %s | %s | %s | %.1f KiB | %s |\n", s.Sessions, via, Dur(s.OpenTime), s.CallsPerSec,
				Dur(s.Latency.P50), Dur(s.Latency.P99), s.Errors, MiB(s.RSSBefore), MiB(s.RSSIdle), MiB(s.RSSLoad), float64(s.PerSession())/1024, shim)
		}
		p("\nAll sessions share one target (watcher, upstream, MCP server). The first session creates it and it outlives the last one by 5 minutes, so growth per session includes it only when no earlier section had created it.\n")
		for _, s := range r.Scale {
			if s.Sessions == 100 {
				p("\nTarget: daemon RSS < %s with 100 idle sessions: %s (%s, %s).\n", MiB(TargetRSS100), verdict(s.RSSIdle < TargetRSS100), MiB(s.RSSIdle), map[bool]string{true: "shims", false: "direct sockets"}[s.ViaShim])
				break
			}
		}
		p("\n")
	}

	if len(r.Sizes) > 0 {
		p("### 5. Token efficiency (bytes of each tool's default answer on the seeded simulator corpus)\n\n")
		p("| tool | arguments | bytes | ≈ tokens (bytes/4) | over %d KiB |\n|---|---|---:|---:|---|\n", BudgetBytes>>10)
		for _, s := range r.Sizes {
			over := ""
			if s.Bytes > BudgetBytes {
				over = "**yes**"
				if strings.HasPrefix(s.Tool, "tools/list") {
					over = "yes (definitions, paid once per session, not a tool answer)"
				}
			}
			args := "`" + s.Args + "`"
			if s.Args == "" || s.Args == "{}" {
				args = "—"
			}
			if s.Err != "" {
				args += " (tool error)"
			}
			p("| %s | %s | %d | %d | %s |\n", s.Tool, args, s.Bytes, s.Bytes/4, over)
		}
		p("\n")
	}
}

// LoadAvg returns the 1, 5 and 15 minute load averages from /proc/loadavg ("" if unreadable).
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// KiB formats a byte count in KiB.
func KiB(b int64) string { return fmt.Sprintf("%.0f KiB", float64(b)/1024) }

func (r *Report) overheadMarkdown(p func(string, ...any)) {
	base := r.Overhead[0]
	p("### 1. Per-call overhead (tool `health` = `GET /api/health`, sequential, %d calls per mode, interleaved)\n\n", base.N)
	p("| path | p50 | p99 | mean | p50 ÷ baseline | added p50 | added p99 | daemon CPU/call | daemon alloc/call (GCs per 1000 calls) | shim CPU/call |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range r.Overhead {
		added50, added99, ratio := "—", "—", "1.00"
		if i > 0 {
			added50, added99 = Dur(m.P50-base.P50), Dur(m.P99-base.P99)
			ratio = fmt.Sprintf("%.2f", float64(m.P50)/float64(base.P50))
		}
		dcpu, dalloc, scpu := "—", "—", "—"
		if m.DaemonCPU > 0 {
			dcpu = Dur(m.DaemonCPU)
		}
		if m.DaemonAllocCalls > 0 {
			// gctrace's figures are whole MiB: with a steady live heap, the sum can be off by up
			// to half a MiB per cycle, which is the ± shown.
			bound := int64(m.DaemonGCs) << 19 / int64(m.DaemonAllocCalls)
			dalloc = fmt.Sprintf("%s ± %s (%.0f)", KiB(m.DaemonAlloc), KiB(bound), 1000*float64(m.DaemonGCs)/float64(m.DaemonAllocCalls))
		}
		if m.ShimCPU > 0 {
			scpu = Dur(m.ShimCPU)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Mode, Dur(m.P50), Dur(m.P99), Dur(m.Mean), ratio, added50, added99, dcpu, dalloc, scpu)
	}
	p("\n")
	target := func(label string, full ModeResult) {
		p("* %s: added p50 < %s: %s (%s); added p99 < %s: %s (%s).\n", label,
			Dur(TargetAddedP50), verdict(full.P50-base.P50 < TargetAddedP50), Dur(full.P50-base.P50),
			Dur(TargetAddedP99), verdict(full.P99-base.P99 < TargetAddedP99), Dur(full.P99-base.P99))
	}
	raw, okRaw := Find(r.Overhead, ModeShimRaw)
	sdk, okSDK := Find(r.Overhead, ModeShim)
	if okRaw {
		target("Targets, the gateway's cost (full path with a raw JSON-RPC client, as a harness, minus the baseline)", raw)
	}
	if okSDK {
		target("The same with the go-sdk client (its own cost included)", sdk)
	}
	if okRaw && okSDK {
		p("* The go-sdk client's own cost on the full path (go-sdk p50 − raw p50): %s.\n", Dur(sdk.P50-raw.P50))
	}
	if s, ok := Find(r.Overhead, ModeSocketRaw); ok && okRaw {
		p("* The shim process's share (full path raw p50 − socket raw p50): %s.\n", Dur(raw.P50-s.P50))
	}
	p("\n")
}

// codeSpan renders s as inline Markdown code; a double-backtick fence lets s hold backticks
// (a -note in the command line often does).
func codeSpan(s string) string {
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}
