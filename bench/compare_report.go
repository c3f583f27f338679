package bench

import (
	"time"
)

// Goals of issue 12 part B, each measured in one run against the out-of-process baseline.
const (
	GoalAddedP50      = 100 * time.Microsecond // back to back, raw client, full path
	GoalAddedP99      = time.Millisecond       // per-call added cost's p99, and the path's own p99
	GoalDaemonCPU     = 120 * time.Microsecond
	GoalShimPrivate   = 3 << 19 // 1.5 MiB
	GoalSessionsCalls = 2 * 1973
)

func (r *Report) compareMarkdown(p func(string, ...any)) {
	c := r.Compare
	p("### Before and after, one run (health = `GET /api/health`, %d rounds; simulator in its own process)\n\n", c.Calls)
	p("Each round makes one direct call and one call on every path below, in an order rotated round by round. " +
		"*Added* is per call: the path's latency minus the direct call of the same round; its percentiles are of those differences. " +
		"*Own* percentiles are of the path's latency itself.\n\n")
	p("| side | path | own p50 | own p99 | added p50 | added p99 | daemon CPU/call | shim CPU/call |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	p("| — | direct HTTP, Go keep-alive client (baseline) | %s | %s | — | — | — | — |\n", Dur(c.Direct.P50), Dur(c.Direct.P99))
	for _, x := range c.Paths {
		shim := "—"
		if x.ShimCPU > 0 {
			shim = Dur(x.ShimCPU)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Side, x.Mode, Dur(x.P50), Dur(x.P99), Dur(x.Added.P50), Dur(x.Added.P99), Dur(x.DaemonCPU), shim)
	}
	p("\nDaemon CPU per call is the daemon's scheduler run time (`/proc/<pid>/task/*/schedstat`) over every call it served in the run, divided by their number.\n\n")

	if len(r.Spaced) > 0 {
		p("### Spaced calls, both paths equally cold (full path, raw client)\n\n")
		p("| gap | side | rounds | own p50 | own p99 | direct p50 (same rounds) | direct calls that reconnected | added p50 | added p99 |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Spaced {
			p("| %s | %s | %d | %s | %s | %s | %d | %s | %s |\n", s.Gap, s.Side, s.Full.N, Dur(s.Full.P50), Dur(s.Full.P99), Dur(s.Direct.P50), s.DirectReconns, Dur(s.Added.P50), Dur(s.Added.P99))
		}
		p("\nEach round makes one direct call and one full-path call per side, each after the gap of silence on all of them, in an order rotated round by round; *added* is each call minus the direct call of its round. The direct client drops idle connections after the daemon's idle timeout (%s), so neither path starts warmer.\n\n", directIdleConnLimit)
	}

	if len(r.Sessions) > 0 {
		p("### Concurrent sessions (shims, raw clients, calling back to back)\n\n")
		p("| side | sessions | calls | calls/s | p50 | p99 | errors | daemon CPU/call | shim RSS | shim private | daemon private, before → idle | private per session (shim + daemon growth) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Sessions {
			p("| %s | %d | %d | %.0f | %s | %s | %d | %s | %s | %s | %s → %s | %s |\n", s.Side, s.Sessions, s.Calls, s.CallsPerSec, Dur(s.Latency.P50), Dur(s.Latency.P99), s.Errors,
				Dur(s.DaemonCPU), MiB(s.Shim.RSS), MiB(s.Shim.Private), MiB(s.DaemonBefore.Private), MiB(s.DaemonIdle.Private), MiB(s.PerSessionPrivate()))
		}
		p("\nMemory from `/proc/<pid>/smaps_rollup`: private = Private_Clean + Private_Dirty (what only that process holds); RSS also counts the binary's pages every shim shares.\n\n")
	}

	p("#### Goals (issue 12 B), side \"after\"\n\n| goal | measured | verdict |\n|---|---:|---|\n")
	full, ok := c.Find("after", PathShimRaw)
	if !ok {
		return
	}
	p("| added p50 < %s, back to back (full path, raw client) | %s | %s |\n", Dur(GoalAddedP50), Dur(full.Added.P50), verdict(full.Added.P50 < GoalAddedP50))
	p("| added p99 < %s (per-call differences) | %s | %s |\n", Dur(GoalAddedP99), Dur(full.Added.P99), verdict(full.Added.P99 < GoalAddedP99))
	p("| full path's own p99 < baseline p50 + %s | %s (baseline p50 %s) | %s |\n", Dur(GoalAddedP99), Dur(full.P99), Dur(c.Direct.P50), verdict(full.P99 < c.Direct.P50+GoalAddedP99))
	for _, s := range r.Spaced {
		if s.Side != "after" {
			continue
		}
		p("| %s apart, equally cold: added p50 ≤ %s | %s | %s |\n", s.Gap, Dur(Target23AddedSpaced), Dur(s.Added.P50), verdict(s.Added.P50 <= Target23AddedSpaced))
	}
	p("| daemon CPU per call < %s | %s | %s |\n", Dur(GoalDaemonCPU), Dur(full.DaemonCPU), verdict(full.DaemonCPU < GoalDaemonCPU))
	for _, s := range r.Sessions {
		if s.Side != "after" {
			continue
		}
		p("| shim private memory < %s | %s | %s |\n", MiB(GoalShimPrivate), MiB(s.Shim.Private), verdict(s.Shim.Private < GoalShimPrivate))
		p("| %d sessions: ≥ %d calls/s | %.0f | %s |\n", s.Sessions, GoalSessionsCalls, s.CallsPerSec, verdict(s.CallsPerSec >= GoalSessionsCalls))
	}
	p("\n")
}
