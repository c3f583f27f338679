package bench

import (
	"fmt"
	"time"
)

// issue23Markdown writes issue 23 item 5's figures, each beside its baseline and target.
func (r *Report) issue23Markdown(p func(string, ...any)) {
	x := r.Issue23
	p("### Issue 23 item 5: the one path against its baselines (same run)\n\n")
	p("| figure | measured | baseline, same run | target | verdict |\n|---|---:|---:|---:|---|\n")
	sp := x.Spawn
	p("| spawn → initialize answer, daemon running (p50; %d launches each, alternating) | %s (p99 %s) | bare Go program answering one line: %s (p99 %s) | ≤ %.0f× | %.1f× %s |\n",
		sp.Shim.N, Dur(sp.Shim.P50), Dur(sp.Shim.P99), Dur(sp.Bare.P50), Dur(sp.Bare.P99), Target23SpawnRatio, sp.Ratio, verdict(sp.Ratio <= Target23SpawnRatio))
	a := x.Autostart
	p("| spawn → initialize answer with autostart (p50; %d launches) | %s (p99 %s) | — | ≤ %s | %s |\n",
		a.N, Dur(a.P50), Dur(a.P99), Dur(Target23Autostart), verdict(a.P50 <= Target23Autostart))
	for _, s := range r.Sessions {
		if s.Side == "after" {
			p("| shim private memory (median of %d idle shims) | %s | — | ≤ %s | %s |\n", s.Sessions, MiB(s.Shim.Private), MiB(Target23ShimPrivate), verdict(s.Shim.Private <= Target23ShimPrivate))
		}
	}
	if c := r.Compare; c != nil {
		if f, ok := c.Find("after", PathShimRaw); ok {
			p("| added p50, back to back (full path, raw client; %d rounds) | %s | direct net/http: %s | ≤ %s | %s |\n",
				c.Calls, Dur(f.Added.P50), Dur(c.Direct.P50), Dur(Target23AddedP50), verdict(f.Added.P50 <= Target23AddedP50))
			p("| added p99, back to back (per-round differences) | %s | direct p99: %s | ≤ %s | %s |\n",
				Dur(f.Added.P99), Dur(c.Direct.P99), Dur(Target23AddedP99), verdict(f.Added.P99 <= Target23AddedP99))
		}
	}
	for _, cp := range r.Spaced {
		if cp.Side != "after" {
			continue
		}
		p("| added p50, calls %s apart, both equally cold (%d pairs; p99 %s) | %s | direct after the same gap: %s (%d reconnected) | ≤ %s | %s |\n",
			cp.Gap, cp.Added.N, Dur(cp.Added.P99), Dur(cp.Added.P50), Dur(cp.Direct.P50), cp.DirectReconns, Dur(Target23AddedSpaced), verdict(cp.Added.P50 <= Target23AddedSpaced))
	}
	f := x.Floor
	p("| daemon CPU per call (socket, raw client; %d calls) | %s (RTT p50 %s) | go-sdk stdio server, raw handler, %d-byte text: %s (RTT p50 %s) | ≤ %.1f× | %.2f× %s |\n",
		f.Calls, Dur(f.DaemonCPU), Dur(f.DaemonRTT.P50), f.TextBytes, Dur(f.FloorCPU), Dur(f.FloorRTT.P50), Target23FloorRatio, f.Ratio, verdict(f.Ratio <= Target23FloorRatio))
	for _, s := range r.Sessions {
		if s.Side == "after" {
			p("| calls/s with %d sessions (shims, raw clients, back to back) | %.0f | — | reported | — |\n", s.Sessions, s.CallsPerSec)
		}
	}
	if s := x.Idle1000; s != nil {
		p("| daemon RSS with %d idle sessions (socket, initialized) | %s (before %s) | — | ≤ %s | %s |\n",
			s.Sessions, MiB(s.RSSIdle), MiB(s.RSSBefore), MiB(Target23Idle1000), verdict(s.RSSIdle <= Target23Idle1000))
	}
	i := x.Idle
	p("| idle wake-ups: daemon context switches in %s, %d sessions open, no call (%d threads) | %d | — | ≤ %d | %s |\n",
		i.Window, i.Sessions, i.DaemonThreads, i.Daemon, Target23IdleSwitches, verdict(i.Daemon <= Target23IdleSwitches))
	p("\n")
	p("Context switches per call in the CPU comparison: daemon %.1f, go-sdk stdio server %.1f. The busiest idle shim switched %d times in the same %s.\n\n",
		f.DaemonSwitches, f.FloorSw, i.ShimMax, i.Window)
	p("*Added* is per call (or per pair): the path's latency minus the baseline call made in the same round, and its percentiles are of those differences. ")
	p("In the spaced rows each call follows %s of silence on both paths, the order alternating pair by pair, and the direct client drops idle connections after the daemon's own idle timeout (%s), so neither path starts warmer than the other.\n\n",
		durList(r.Spaced), directIdleConnLimit)
}

func durList(c []ColdPairResult) string {
	s := ""
	for _, x := range c {
		if x.Side != "after" {
			continue
		}
		if s != "" {
			s += " or "
		}
		s += x.Gap.String()
	}
	if s == "" {
		return fmt.Sprint(time.Duration(0))
	}
	return s
}
