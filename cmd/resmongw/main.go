// Command resmongw is the resmon MCP gateway: a per-user daemon, the stdio shim harnesses
// launch, and the tools to install, configure and inspect both.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/resmongw/resmongw/daemon"
	"github.com/resmongw/resmongw/packaging"
	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/shim"
	"github.com/resmongw/resmongw/tooltable"
)

const usage = `resmongw — the resmon MCP gateway

Usage:
  resmongw stdio                 the MCP server a harness launches (pipes to the daemon; starts it if needed)
  resmongw serve [flags]         run the daemon in the foreground
  resmongw status [--json]       what the daemon is connected to, and why not
  resmongw install|uninstall|start|stop|restart
                                 manage the per-user service (systemd user unit / launchd agent)
  resmongw config <harness> [--write] [--force] [--no-approvals] [--scope user|project]
                 [--state-dir DIR] [--port N] [--name NAME] [--file PATH]
                                 print or merge the harness entry and its approval settings
                                 (claude-code, codex, cursor, claude-desktop)
  resmongw tools [--reads|--writes] [--json]
                                 the tools: name, read or write, what each does
  resmongw dev backend [flags]   run the built-in resmon backend simulator (simulated data)
  resmongw version               print the version

Run 'resmongw <command> -h' for a command's flags.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "stdio":
		return shim.Main(rest)
	case "serve":
		return daemon.ServeMain(rest)
	case "status":
		return daemon.StatusMain(rest)
	case "install", "uninstall", "start", "stop", "restart":
		return packaging.ServiceMain(cmd, rest)
	case "config":
		return packaging.ConfigMain(rest)
	case "tools":
		return tooltable.Main(rest)
	case "dev":
		if len(rest) > 0 && rest[0] == "backend" {
			return resmonsim.Main(rest[1:])
		}
		fmt.Fprintln(stderr, "resmongw dev: the only dev command is 'backend'")
		return 2
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "resmongw", daemon.Version, "(MCP contract", "2.3)")
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "resmongw: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}
