// Command benchtable runs every gateway measurement in one process and prints a Markdown report.
//
//	go run ./bench/cmd/benchtable > /tmp/bench.md
//	go run ./bench/cmd/benchtable -o BENCHMARKS.md -section latest
//
// It builds cmd/resmongw (or uses -bin), starts a simulated backend and a daemon in a private
// temporary directory, and removes both when done. Progress goes to stderr. With -o, the
// report replaces the named section of that file (between its benchtable marker comments)
// instead of going to stdout; the report itself records the command that produced it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/bench"
	"github.com/resmongw/resmongw/internal/testkit"
)

func main() { os.Exit(run()) }

func run() int {
	binFlag := flag.String("bin", "", "resmongw binary to measure (default: build cmd/resmongw)")
	calls := flag.Int("calls", 2000, "calls per mode for the per-call overhead")
	cold := flag.Int("cold", 30, "shim launches against a running daemon")
	auto := flag.Int("autostart", 10, "shim launches that autostart a daemon")
	swaps := flag.Int("swaps", 10, "backend restarts per swap variant")
	sessions := flag.String("sessions", "1,10,100,1000", "concurrency levels for the scale run")
	shimMax := flag.Int("shim-max", 100, "use shim processes up to this many sessions, direct socket connections above")
	load := flag.Duration("load", 3*time.Second, "how long each scale level calls")
	daemonEnv := flag.String("daemon-env", "", "comma-separated KEY=VALUE added to the daemon's environment (e.g. GOGC=400)")
	only := flag.String("only", "", "comma-separated sections to run (issue23,compare,spaced,sessions,overhead,cold,swap,scale,sizes; issue23 runs compare, spaced and sessions too); default all")
	beforeBin := flag.String("before-bin", "", "a resmongw binary built from an earlier tree (e.g. main), measured beside this one in the same run")
	compareCalls := flag.Int("compare-calls", 3000, "rounds of the before/after comparison (one call per path per round)")
	spacedGaps := flag.String("spaced-gaps", "1s", "gaps of silence before each spaced call, direct or through the gateway (shorten for a quick run, e.g. 10ms,50ms)")
	spacedCalls := flag.Int("spaced-calls", 15, "rounds per spaced gap (a direct call and one call per side)")
	sessionsN := flag.Int("concurrent", 8, "concurrent sessions for the throughput and per-session memory run")
	sessionsLoad := flag.Duration("concurrent-load", 3*time.Second, "how long each concurrent round calls")
	spawnN := flag.Int("spawn", 30, "issue23: launches of the shim and of the bare program (spawn → initialize), and of autostart")
	floorCalls := flag.Int("floor-calls", 2000, "issue23: calls to the daemon and to go-sdk's stdio server each, alternating")
	idleSessions := flag.Int("idle-sessions", 1000, "issue23: idle sessions whose daemon RSS is measured")
	gctrace := flag.Bool("gctrace", true, "run the daemon with GODEBUG=gctrace=1 to count its allocations per call")
	outFile := flag.String("o", "", "write the report into this Markdown file's -section instead of stdout")
	section := flag.String("section", "latest", "with -o: the section to replace (<!-- benchtable:NAME:begin/end --> markers)")
	note := flag.String("note", "", "a sentence printed under the command in the report (e.g. which binary -bin is)")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "benchtable: "+format+"\n", a...) }
	want := func(section string) bool {
		if *only != "" && strings.Contains(","+*only+",", ",issue23,") && (section == "compare" || section == "sessions" || section == "spaced") {
			return true // issue 23's table takes its back-to-back, spaced and 8-session figures from these
		}
		return *only == "" || strings.Contains(","+*only+",", ","+section+",")
	}
	// The spaced and sessions sections are measured on the comparison's world and report
	// against its back-to-back figures; asked for alone they would silently measure nothing.
	for _, s := range []string{"spaced", "sessions"} {
		if want(s) && !want("compare") {
			logf("-only %s needs compare too (it reports against the comparison's back-to-back figures): use -only compare,%s", s, s)
			return 2
		}
	}

	tmp, err := os.MkdirTemp("", "benchtable-")
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bin := *binFlag
	if bin == "" {
		logf("building cmd/resmongw")
		if bin, err = testkit.Build(ctx, tmp, false); err != nil {
			logf("%v", err)
			return 1
		}
	}
	var extra []string
	if *daemonEnv != "" {
		extra = strings.Split(*daemonEnv, ",")
	}
	if *gctrace {
		extra = bench.WithGCTrace(extra)
	}
	w, err := bench.NewWorld(bin, extra...)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer w.Close()
	if *beforeBin != "" {
		logf("starting the before daemon from %s", *beforeBin)
		if err := w.StartBefore(*beforeBin); err != nil {
			logf("%v", err)
			return 1
		}
	}

	r := &bench.Report{Machine: bench.ThisMachine(), When: time.Now(), Note: *note, LoadBefore: bench.LoadAvg(),
		Command: commandLine(os.Args[1:])}
	fail := func(section string, err error) int {
		logf("%s: %v", section, err)
		return 1
	}
	if want("compare") {
		logf("before/after comparison, %d rounds", *compareCalls)
		if r.Compare, err = bench.MeasureCompare(ctx, w, *compareCalls); err != nil {
			return fail("compare", err)
		}
	}
	if want("compare") && want("sessions") {
		logf("%d concurrent sessions", *sessionsN)
		if r.Sessions, err = bench.MeasureSessions(ctx, w, *sessionsN, *sessionsLoad, 2); err != nil {
			return fail("sessions", err)
		}
	}
	if want("compare") && want("spaced") {
		var gaps []time.Duration
		for _, f := range strings.Split(*spacedGaps, ",") {
			g, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil || g <= 0 {
				return fail("spaced", fmt.Errorf("bad -spaced-gaps entry %q", f))
			}
			gaps = append(gaps, g)
		}
		logf("spaced calls, %d per gap (%s)", *spacedCalls, *spacedGaps)
		if r.Spaced, err = bench.MeasureColdPairs(ctx, w, gaps, *spacedCalls); err != nil {
			return fail("spaced", err)
		}
	}
	if want("issue23") {
		if err := issue23(ctx, w, tmp, r, issue23Flags{*spawnN, *floorCalls, *idleSessions, *sessionsN}, logf); err != nil {
			return fail("issue23", err)
		}
	}
	if want("sizes") {
		logf("tool answer sizes")
		if r.Sizes, err = bench.MeasureToolSizes(ctx, w.Dir); err != nil {
			return fail("sizes", err)
		}
	}
	if want("overhead") {
		logf("per-call overhead, %d calls per mode", *calls)
		if r.Overhead, err = bench.MeasureOverhead(ctx, w, *calls); err != nil {
			return fail("overhead", err)
		}
	}
	if want("cold") {
		logf("cold start, %d launches; autostart, %d launches", *cold, *auto)
		s, err := bench.MeasureColdStart(ctx, w, *cold)
		if err != nil {
			return fail("cold start", err)
		}
		r.Cold = &s
		a, err := bench.MeasureAutostart(ctx, w, *auto)
		if err != nil {
			return fail("autostart", err)
		}
		r.Autostart = &a
	}
	if want("scale") {
		for _, f := range strings.Split(*sessions, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return fail("scale", fmt.Errorf("bad -sessions entry %q", f))
			}
			logf("scale: %d sessions", n)
			s, err := bench.MeasureScale(ctx, w, n, n <= *shimMax, *load)
			if err != nil {
				return fail("scale", err)
			}
			r.Scale = append(r.Scale, s)
		}
	}
	// Last: it restarts the simulator, which the other sections assume is untouched.
	if want("swap") {
		for _, newPort := range []bool{false, true} {
			logf("swap latency, %d restarts (new port: %v)", *swaps, newPort)
			s, err := bench.MeasureSwap(ctx, w, *swaps, newPort)
			if err != nil {
				return fail("swap", err)
			}
			r.Swaps = append(r.Swaps, s)
		}
	}
	r.LoadAfter = bench.LoadAvg()
	if *outFile == "" {
		r.Markdown(os.Stdout)
		return 0
	}
	var md strings.Builder
	r.Markdown(&md)
	if err := bench.WriteSection(*outFile, *section, []byte(md.String())); err != nil {
		logf("%v", err)
		return 1
	}
	logf("wrote section %q of %s", *section, *outFile)
	return 0
}

type issue23Flags struct {
	spawn    int
	floor    int
	idle1000 int
	idle     int
}

// issue23 measures issue 23 item 5's figures not taken from the other sections.
func issue23(ctx context.Context, w *bench.World, tmp string, r *bench.Report, f issue23Flags, logf func(string, ...any)) error {
	h, err := bench.BuildHelpers(ctx, tmp)
	if err != nil {
		return err
	}
	x := &bench.Issue23{}
	logf("issue23: spawn → initialize, %d launches each", f.spawn)
	if x.Spawn, err = bench.MeasureSpawn(ctx, w, h, f.spawn); err != nil {
		return err
	}
	logf("issue23: autostart, %d launches", f.spawn)
	if x.Autostart, err = bench.MeasureAutostartRaw(ctx, w, f.spawn); err != nil {
		return err
	}
	logf("issue23: daemon CPU against go-sdk's stdio server, %d calls each", f.floor)
	if x.Floor, err = bench.MeasureFloor(ctx, w, h, f.floor); err != nil {
		return err
	}
	logf("issue23: idle wake-ups, %d sessions", f.idle)
	if x.Idle, err = bench.MeasureIdle(ctx, w, f.idle); err != nil {
		return err
	}
	if f.idle1000 > 0 {
		logf("issue23: %d idle sessions", f.idle1000)
		s, err := bench.MeasureScale(ctx, w, f.idle1000, false, time.Second)
		if err != nil {
			return err
		}
		x.Idle1000 = &s
	}
	r.Issue23 = x
	return nil
}

// commandLine is how this run was invoked, quoted so that it can be pasted into a shell.
func commandLine(args []string) string {
	out := []string{"go", "run", "./bench/cmd/benchtable"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$`\\|&;<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
