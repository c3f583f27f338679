package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/resmongw/resmongw/daemon"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/version"
)

// demoName is the server name the demo's harness lines use, so they never replace a real
// "resmon" entry.
const demoName = sessionwire.DemoName

func demoCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "try it: a simulated backend, the daemon, real tool calls, and how to connect a harness",
		Long: `Start a private simulated resmon backend and a daemon for it (both in a new private
directory), make a few real tool calls through the real 'resmongw stdio' shim, print them,
then print the line that connects each harness to this demo. It runs until Ctrl-C (or SIGTERM,
SIGHUP, or its output closing), then stops everything and removes its directory: nothing is
left running and nothing is written elsewhere. The data is invented (SIMULATED). A harness
entry left from an ended demo starts nothing; its calls say the demo has ended and how to
remove the entry.`,
		GroupID: "use",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// The demo's daemon runs in this process and holds the simulator's token: the
			// same hardening as 'resmongw serve', before any token exists.
			daemon.Harden()
			// Every end cleans up as Ctrl-C does: a terminal closing (HUP), a kill (TERM),
			// or whoever reads our output going away.
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(sigs)
			// Caught, a write to a closed stdout is an EPIPE error instead of a SIGPIPE that
			// would kill the demo before it removes its directory.
			pipes := make(chan os.Signal, 1)
			signal.Notify(pipes, syscall.SIGPIPE)
			defer signal.Stop(pipes)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			closed := outputClosed(stdout)
			go func() {
				select {
				case <-sigs:
					cancel()
				case <-closed:
					cancel()
				case <-ctx.Done():
				}
			}()
			return done(runDemo(ctx, stdout, stderr))
		},
	}
}

// runDemo runs the demo until ctx ends.
func runDemo(ctx context.Context, stdout, stderr io.Writer) (code int) {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "resmongw demo: "+format+"\n", a...)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	dir, err := os.MkdirTemp("", "resmongw-demo-")
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(stderr, "resmongw demo: removing %s: %v\n", dir, err)
		}
	}()
	stateDir, socket := filepath.Join(dir, "backend"), filepath.Join(dir, "mcp.sock")
	if _, err := paths.Socket(socket, os.Getenv); err != nil {
		return fail("%v (set TMPDIR to a shorter directory)", err)
	}

	sim, err := resmonsim.Start(resmonsim.Options{StateDir: stateDir, PortFile: filepath.Join(stateDir, "resmon.port")})
	if err != nil {
		return fail("simulated backend: %v", err)
	}
	defer sim.Stop()

	srv, err := daemon.New(daemon.Config{Socket: socket}) // its log: beside the socket, in dir
	if err != nil {
		return fail("daemon: %v", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		return fail("daemon: %v", err)
	}
	dctx, stopDaemon := context.WithCancel(context.Background())
	served := make(chan int, 1)
	go func() { served <- srv.Run(dctx, ln) }()
	defer func() {
		stopDaemon()
		<-served
	}()

	// DemoEnv marks the entries printed below: once the demo ends they start nothing and
	// say the demo has ended (sessionwire.DemoEnv).
	env := []string{paths.SocketEnv + "=" + socket, "RESMON_STATE_DIR=" + stateDir, sessionwire.DemoEnv + "=" + dir}
	fmt.Fprintf(stdout, "resmongw demo: a SIMULATED resmon backend (invented papers) at %s,\n", sim.BaseURL())
	fmt.Fprintf(stdout, "and a daemon for it on %s; everything lives in %s.\n\n", socket, dir)
	fmt.Fprintln(stdout, "A few tool calls through 'resmongw stdio', as a harness makes them:")
	cs, err := demoCalls(ctx, stdout, exe, env)
	if err != nil {
		if ctx.Err() != nil {
			return 0
		}
		return fail("%v (the daemon's log: %s)", err, paths.LogFile(socket))
	}
	// The demo's session stays open until the end, so the demo target is one in use: a plain
	// `resmongw status` on this socket follows it, not the absent default backend.
	defer cs.Close()
	printConnectLines(stdout, harnessCommand(exe, stdout), env)
	fmt.Fprintln(stdout, "\nPress Ctrl-C to stop the demo (the backend and daemon stop, the directory is removed).")
	select {
	case <-ctx.Done():
	case code := <-served: // stopped from outside (`resmongw stop` on its socket)
		served <- code // for the deferred wait
		fmt.Fprintln(stdout, "resmongw demo: the daemon stopped")
	}
	fmt.Fprintln(stdout, "resmongw demo: stopped; removed", dir)
	return 0
}

// demoCalls starts the real shim, as a harness would, prints a few calls, and returns the
// session, still open.
func demoCalls(ctx context.Context, w io.Writer, exe string, env []string) (_ *mcp.ClientSession, err error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.Command(exe, "stdio")
	cmd.Env = append(minimalEnv(), env...) // sessionwire.DemoEnv in env: it never autostarts
	client := mcp.NewClient(&mcp.Implementation{Name: "resmongw-demo", Version: version.Version}, nil)
	// The session outlives cctx (which bounds the calls), so it is connected on ctx.
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting through the shim: %w", err)
	}
	defer func() {
		if err != nil {
			cs.Close()
		}
	}()
	tools, err := cs.ListTools(cctx, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n  tools/list: %d tools\n", len(tools.Tools))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"health", nil},
		{"search_corpus", map[string]any{"query": "graph neural networks", "limit": 3}},
		{"list_routines", map[string]any{"limit": 3}},
	} {
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.tool, err)
		}
		args := "{}"
		if c.args != nil {
			b, _ := json.Marshal(c.args)
			args = string(b)
		}
		fmt.Fprintf(w, "\n  %s %s\n", c.tool, args)
		for _, line := range summarize(c.tool, res) {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	return cs, nil
}

// summarize is a tool result in a few lines a person reads: the fields that matter for the
// demo's three tools, else the JSON cut short.
func summarize(tool string, res *mcp.CallToolResult) []string {
	var text string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text += t.Text
		}
	}
	var v map[string]any
	if res.IsError || json.Unmarshal([]byte(text), &v) != nil {
		return cut(strings.Split(strings.TrimSpace(text), "\n"))
	}
	str := func(m map[string]any, k string) string {
		if x, ok := m[k]; ok && x != nil {
			return fmt.Sprint(x)
		}
		return "-"
	}
	list := func(k string) []map[string]any {
		var out []map[string]any
		items, _ := v[k].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	switch tool {
	case "health":
		line := fmt.Sprintf("resmon %s, status %s", str(v, "version"), str(v, "status"))
		if v["simulated"] == true {
			line += ", SIMULATED (invented data)"
		}
		if id, ok := v["identity"].(map[string]any); ok {
			line += ", runtime " + str(id, "runtime_id")
		}
		return []string{line}
	case "search_corpus":
		lines := []string{fmt.Sprintf("%s papers (mode %s; more: %s)", str(v, "count"), str(v, "mode"), str(v, "has_more"))}
		for _, p := range list("papers") {
			lines = append(lines, fmt.Sprintf("- %s  %s  [%s]", str(p, "date"), str(p, "title"), str(p, "source")))
		}
		return lines
	case "list_routines":
		lines := []string{fmt.Sprintf("%s routines", str(v, "count"))}
		for _, r := range list("routines") {
			active := "inactive"
			if r["active"] == true {
				active = "active"
			}
			lines = append(lines, fmt.Sprintf("- %s: cron %q, %s, last run %s", str(r, "name"), str(r, "schedule"), active, str(r, "last_status")))
		}
		return lines
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return cut(strings.Split(string(b), "\n"))
}

// cut keeps the first lines of a long answer.
func cut(lines []string) []string {
	const max = 12
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("… (%d more lines)", len(lines)-max))
	}
	return lines
}

// minimalEnv is what the demo's shim inherits: enough to run, nothing that could point it at
// another daemon or backend.
func minimalEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// harnessCommand is the binary the printed lines name: this one, unless it is a temporary
// `go run` build, which is gone once the demo ends.
func harnessCommand(exe string, w io.Writer) string {
	if !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return exe
	}
	if p, err := exec.LookPath("resmongw"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	fmt.Fprintln(w, "\n(This is a temporary 'go run' build; for harnesses, install it: go install ./cmd/resmongw,\n then use $(go env GOPATH)/bin/resmongw in the lines below.)")
	return "resmongw"
}

// printConnectLines prints, for each harness, the exact way to connect it to this demo.
func printConnectLines(w io.Writer, bin string, env []string) {
	q := shellQuote
	var claude, codex strings.Builder
	fmt.Fprintf(&claude, "claude mcp add %s", demoName)
	fmt.Fprintf(&codex, "codex mcp add %s", demoName)
	envMap := map[string]string{}
	for _, kv := range env {
		fmt.Fprintf(&claude, " -e %s", q(kv))
		fmt.Fprintf(&codex, " --env %s", q(kv))
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	fmt.Fprintf(&claude, " -- %s stdio", q(bin))
	fmt.Fprintf(&codex, " -- %s stdio", q(bin))
	entry, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		demoName: map[string]any{"command": bin, "args": []string{"stdio"}, "env": envMap},
	}}, "  ", "  ")
	fmt.Fprintf(w, "\nConnect a harness to this demo (remove it afterwards: claude mcp remove %s, codex mcp remove %s):\n", demoName, demoName)
	fmt.Fprintf(w, "\n  Claude Code:\n    %s\n", claude.String())
	fmt.Fprintf(w, "\n  Codex:\n    %s\n", codex.String())
	fmt.Fprintf(w, "\n  Cursor (~/.cursor/mcp.json) or Claude Desktop (claude_desktop_config.json):\n  %s\n", entry)
	fmt.Fprintf(w, "\n  Status of this demo's daemon:\n    %s %s status\n", strings.Join(quoteAll(env), " "), q(bin))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[](){};&|<>#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
