// Command resmongw is the resmon MCP gateway: a per-user daemon, the stdio shim harnesses
// launch, and the tools to install, configure and inspect both.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/daemon"
	"github.com/resmongw/resmongw/daemonctl"
	"github.com/resmongw/resmongw/doctor"
	"github.com/resmongw/resmongw/packaging"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/shim"
	"github.com/resmongw/resmongw/tooltable"
	"github.com/resmongw/resmongw/version"
)

func main() {
	if code, ok := stdioFast(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stdioFast runs `resmongw stdio` without building the cobra tree: a shim runs once per
// harness session for the session's whole life, so what it allocates at start it holds. Only
// a launch that stdio's own flag set parses cleanly, with no arguments left over (as harness
// configs write it), takes this path, and that parse is the only one; anything else, help
// included, goes to cobra for its usage text and errors.
func stdioFast(args []string) (int, bool) {
	if len(args) == 0 || args[0] != "stdio" {
		return 0, false
	}
	var o shim.Options
	fs := shim.Flags(&o)
	fs.SetOutput(io.Discard)
	if fs.Parse(args[1:]) != nil || fs.NArg() > 0 {
		return 0, false
	}
	return shim.Main(o, daemon.ServeUnreachable), true
}

// exitCode is a command's result as an error: cobra carries it out of RunE, run returns it.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// done turns a command's exit code into RunE's error (nil for 0).
func done(code int) error {
	if code == 0 {
		return nil
	}
	return exitCode(code)
}

// run executes the command line args, writing to stdout and stderr only: tests call it with
// buffers. Exit codes: what the command says, 0 for help, 2 for any usage error.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default: // cobra's own: unknown command or flag, wrong arguments
		fmt.Fprintf(stderr, "resmongw: %v\n", strings.TrimRight(err.Error(), "\n"))
		fmt.Fprintln(stderr, "Run 'resmongw --help' for usage.")
		return 2
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "resmongw",
		Short: "the resmon MCP gateway",
		Long: `resmongw is the resmon MCP gateway: one per-user daemon that serves resmon's tools to every
MCP harness (Claude Code, Codex, Cursor, Claude Desktop). Harnesses launch 'resmongw stdio',
which relays to the daemon over a private Unix socket and starts it when needed.

First time? Run 'resmongw demo': a simulated backend, real tool calls, and the line that
connects each harness.`,
		Version:       version.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// No command: the help, as a usage error.
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(stderr)
			_ = cmd.Help()
			return exitCode(2)
		},
		// Args left nil: cobra then answers an unknown command with its near misses.
	}
	root.SetVersionTemplate("resmongw {{.Version}} (MCP contract 2.3)\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddGroup(&cobra.Group{ID: "use", Title: "Using resmongw:"}, &cobra.Group{ID: "manage", Title: "Managing the daemon:"})

	root.AddCommand(
		stdioCmd(), demoCmd(stdout, stderr), configCmd(stdout, stderr), toolsCmd(stdout, stderr),
		statusCmd(stdout, stderr), activityCmd(stdout, stderr), doctorCmd(stdout, stderr), serveCmd(stderr),
		installCmd(stdout, stderr),
		serviceCmd("uninstall", "stop and remove the per-user service", stdout, stderr),
		withLong(lifecycleCmd("start", "start the daemon (through the service when installed)", stdout, stderr), startLong),
		withLong(lifecycleCmd("stop", "stop the daemon, service-managed or autostarted; open sessions end", stdout, stderr), stopLong),
		withLong(lifecycleCmd("restart", "restart the daemon, service-managed or autostarted; open sessions reconnect", stdout, stderr), restartLong),
		devCmd(stderr),
		&cobra.Command{
			Use: "version", Short: "print the version", Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				fmt.Fprintln(stdout, "resmongw", version.Version, "(MCP contract 2.3)")
				return nil
			},
		},
	)
	return root
}

// The help of start, stop and restart: what each does to which daemon, and what follows.
const (
	startLong = `Start the daemon when none serves, and wait until it accepts sessions.

With the per-user service installed ('resmongw install'), the service manager starts it and
keeps it running. Otherwise it starts in the background and stays until 'resmongw stop'.
You rarely need this: 'resmongw stdio', which a harness launches, starts a daemon itself when
none runs (one that exits once it has had no session for a while). Start one ahead to have
it ready, or to see 'resmongw status' before any harness runs.

With --socket or $RESMONGW_SOCKET it acts on the private daemon at that socket, never on the
service. Exit 0 when a daemon serves (already running counts), 1 when none could be started
('resmongw serve --foreground' then shows why). --dry-run says what it would do.`
	stopLong = `Ask the daemon to stop, and wait until it has exited. Calls in flight are answered first;
then open harness sessions end, and their harness shows resmon as disconnected until you
reconnect it (a new session starts a daemon again). With the service installed, the service is
stopped too, so it stays stopped until 'resmongw start' or your next login.

With --socket or $RESMONGW_SOCKET it acts on the private daemon at that socket. A daemon that
is not running is no error: exit 0 when none runs afterwards, 1 when it could not be stopped.
--dry-run says what it would do.`
	restartLong = `Replace the running daemon with a new one, for example after installing a new resmongw
binary. Calls in flight are answered first; open harness sessions then reconnect to the new
daemon by themselves, with nothing to do in the harness. With the service installed, the
service starts the new daemon; otherwise it starts in the background. With no daemon running,
it starts one.

With --socket or $RESMONGW_SOCKET it acts on the private daemon at that socket. Exit 0 when the
new daemon serves. --dry-run says what it would do.`
)

// withLong gives cmd its long help.
func withLong(cmd *cobra.Command, long string) *cobra.Command {
	cmd.Long = long
	return cmd
}

// withFlags declares a command's flags on its pflag set, through the owning package's binder,
// so that cobra parses them once, into that package's options.
func withFlags(cmd *cobra.Command, bind func(*pflag.FlagSet)) *cobra.Command {
	bind(cmd.Flags())
	return cmd
}

func stdioCmd() *cobra.Command {
	var o shim.Options
	return withFlags(&cobra.Command{
		Use:     "stdio",
		Short:   "the MCP server a harness launches (relays to the daemon; starts it if needed)",
		Long:    "The MCP server a harness launches: it relays the harness's stdio to the daemon's socket and\nstarts the daemon when none runs. Its stdout carries protocol bytes only.",
		GroupID: "use",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return done(shim.Main(o, daemon.ServeUnreachable))
		},
	}, func(fs *pflag.FlagSet) { fs.AddGoFlagSet(shim.Flags(&o)) }) // the shim is stdlib only
}

func serveCmd(stderr io.Writer) *cobra.Command {
	var c daemon.Config
	return withFlags(&cobra.Command{
		Use:     "serve",
		Short:   "run the daemon in the foreground",
		Long:    "Run the daemon in the foreground. The service runs this; 'resmongw stdio' starts it with\n--exit-when-idle when no daemon runs.",
		GroupID: "manage",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(daemon.ServeMain(c, stderr))
		},
	}, func(fs *pflag.FlagSet) { daemon.BindServeFlags(fs, &c) })
}

func statusCmd(stdout, stderr io.Writer) *cobra.Command {
	var o daemonctl.StatusOptions
	return withFlags(&cobra.Command{
		Use:   "status",
		Short: "what the daemon is connected to, and why not",
		Long: `What the daemon serves: each backend target, whether it is verified, and the open sessions.
Exit 0 when every target in use has a verified backend, 1 when one has none, 3 when no daemon runs.`,
		GroupID: "manage",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(daemonctl.StatusMain(o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { daemonctl.BindStatusFlags(fs, &o) })
}

func serviceCmd(verb, short string, stdout, stderr io.Writer) *cobra.Command {
	var o packaging.ServiceOptions
	return withFlags(&cobra.Command{
		Use: verb, Short: short, GroupID: "manage", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(packaging.ServiceMain(verb, o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { packaging.BindServiceFlags(fs, verb, &o) })
}

func configCmd(stdout, stderr io.Writer) *cobra.Command {
	var o packaging.ConfigOptions
	return withFlags(&cobra.Command{
		Use:   "config <harness>",
		Short: "print or write a harness's entry and approval settings",
		Long: `Print (or with --write merge into the harness's own files) the entry that launches
'resmongw stdio' and the harness's approval settings for resmon's tools: reads pre-approved,
writes always asking. Harnesses: claude-code, codex, cursor, claude-desktop.`,
		GroupID:   "use",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude-code", "codex", "cursor", "claude-desktop"},
		RunE: func(_ *cobra.Command, args []string) error {
			return done(packaging.ConfigMain(args[0], o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { packaging.BindConfigFlags(fs, &o) })
}

func toolsCmd(stdout, stderr io.Writer) *cobra.Command {
	var o tooltable.Options
	return withFlags(&cobra.Command{
		Use:   "tools",
		Short: "the tools: name, read or write, what each does",
		Long: `Print resmon's tools: the name, read or write, and what each does. Reads may run without
asking; a person confirms every write. --json prints the same rows for scripts, e.g. a
harness's allow-list:  resmongw tools --reads --json | jq -r '.[].name'`,
		GroupID: "use",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(tooltable.Main(o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { tooltable.BindFlags(fs, &o) })
}

func devCmd(stderr io.Writer) *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "developer tools (the resmon backend simulator)",
		// Runnable, so that a mistyped subcommand is an error with a suggestion rather than
		// this help.
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(stderr)
			_ = cmd.Help()
			return exitCode(2)
		},
	}
	dev.SuggestionsMinimumDistance = 2
	dev.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return errors.New(msg)
	}
	var backend resmonsim.CommandOptions
	dev.AddCommand(withFlags(&cobra.Command{
		Use:   "backend",
		Short: "run the built-in resmon backend simulator (SIMULATED data)",
		Long: `Run the built-in simulator of the resmon 2.3.0 backend on 127.0.0.1 until Ctrl-C; SIGHUP
restarts it with a new token. Its data is invented and its health answer says "simulated": true,
which status shows as SIMULATED. Without --state-dir it works in a new private directory
(printed, removed at exit); it refuses resmon's own state directory and any directory whose
port file names a running backend.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(resmonsim.Main(backend, stderr, readPortFile))
		},
	}, func(fs *pflag.FlagSet) { resmonsim.BindFlags(fs, &backend) }))
	return dev
}

func activityCmd(stdout, stderr io.Writer) *cobra.Command {
	var o activity.Options
	return withFlags(&cobra.Command{
		Use:   "activity",
		Short: "the tool calls the daemon served: who, which tool, how each ended",
		Long: `The tool calls the daemon recorded, newest last: time, session, client, tool, read or write,
outcome (ok, the tool's error code, declined, refused_by_policy, outcome_unknown, ...), how a write
was confirmed, and how long it took. Never an argument, a result or a token. -f follows live.`,
		GroupID: "manage",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(activity.Main(o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { activity.BindFlags(fs, &o) })
}

func doctorCmd(stdout, stderr io.Writer) *cobra.Command {
	var o doctor.Options
	return withFlags(&cobra.Command{
		Use:   "doctor",
		Short: "check the whole setup, each check with the command that fixes it",
		Long: `Check, in order: this binary's version against the running daemon's, the socket directory, the
daemon, the service, resmon's state directory, port and token files, resmon's health and identity,
every harness entry that launches resmongw, and the log. Each check passes (✓) or fails (✗) with
its fix; what does not apply is information (·). Exit 0 when all pass, 1 otherwise.`,
		GroupID: "manage",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return done(doctor.Main(o, stdout, stderr))
		},
	}, func(fs *pflag.FlagSet) { doctor.BindFlags(fs, &o) })
}
