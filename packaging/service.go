package packaging

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kardianos/service"
	"github.com/spf13/pflag"
)

// servicePlatform is what differs between the systemd user unit and the launchd agent.
type servicePlatform struct {
	kind      string // "systemd user unit" | "launchd agent"
	filePath  string // where the unit/plist lives
	rendered  string // its expected content for this binary
	config    *service.Config
	preflight func() error // can we talk to the service manager at all?
	// commands says, for printing, what kardianos runs for each verb.
	commands func(verb string) []string
	logHint  string
}

// errUnsupported is returned by newPlatform on systems without a per-user service manager.
var errUnsupported = errors.New("no per-user service manager is supported on this system")

// noopProgram satisfies service.Interface; installing and controlling never run it.
type noopProgram struct{}

func (noopProgram) Start(service.Service) error { return nil }
func (noopProgram) Stop(service.Service) error  { return nil }

// ServiceOptions are the flags of install, uninstall, start, stop and restart.
type ServiceOptions struct {
	DryRun  bool
	NoStart bool // install only
}

// BindServiceFlags declares verb's flags on fs, bound to o.
func BindServiceFlags(fs *pflag.FlagSet, verb string, o *ServiceOptions) {
	fs.BoolVar(&o.DryRun, "dry-run", false, "print what would be written and run, change nothing")
	if verb == "install" {
		fs.BoolVar(&o.NoStart, "no-start", false, "install and enable, but do not start it now")
	}
}

// ServiceMain runs `resmongw install|uninstall|start|stop|restart` with o: the per-user
// service (a systemd user unit on Linux, a launchd agent on macOS).
func ServiceMain(verb string, o ServiceOptions, stdout, stderr io.Writer) int {
	bin, err := binaryPath()
	if err != nil {
		fmt.Fprintf(stderr, "resmongw %s: %v\n", verb, err)
		return 1
	}
	p, err := newPlatform(bin)
	if err != nil {
		fmt.Fprintf(stderr, "resmongw %s: %v\n\n%s", verb, err, noServiceFix)
		return 1
	}
	existing, readErr := os.ReadFile(p.filePath)
	installed := readErr == nil
	if readErr != nil && !errors.Is(readErr, os.ErrNotExist) {
		fmt.Fprintf(stderr, "resmongw %s: %v\n", verb, readErr)
		return 1
	}

	switch verb {
	case "install":
		return installService(p, bin, existing, installed, o.DryRun, o.NoStart, stdout, stderr)
	case "uninstall":
		if !installed {
			fmt.Fprintf(stdout, "resmongw is not installed (no %s at %s); nothing to do.\n", p.kind, p.filePath)
			return 0
		}
		if o.DryRun {
			fmt.Fprintf(stdout, "would remove %s\nwould run:\n%s", p.filePath, indentLines(p.commands("uninstall")))
			return 0
		}
		if err := p.preflight(); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		s, err := service.New(noopProgram{}, p.config)
		if err == nil {
			_ = s.Stop() // not running is fine; a running daemon must not outlive its unit
			err = s.Uninstall()
		}
		if _, statErr := os.Stat(p.filePath); statErr == nil {
			// kardianos stops at the first failing command; the unit still goes.
			if rmErr := os.Remove(p.filePath); rmErr != nil && err == nil {
				err = rmErr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "resmongw uninstall: %v\n", err)
			if _, statErr := os.Stat(p.filePath); statErr == nil {
				return 1
			}
		}
		fmt.Fprintf(stdout, "removed %s\nran:\n%s", p.filePath, indentLines(p.commands("uninstall")))
		return 0
	default: // start, stop, restart
		if !installed {
			fmt.Fprintf(stderr, "resmongw %s: resmongw is not installed as a service (no %s at %s).\nRun 'resmongw install', or run 'resmongw serve' yourself.\n", verb, p.kind, p.filePath)
			return 1
		}
		if o.DryRun {
			fmt.Fprintf(stdout, "would run:\n%s", indentLines(p.commands(verb)))
			return 0
		}
		if err := p.preflight(); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		s, err := service.New(noopProgram{}, p.config)
		if err == nil {
			err = service.Control(s, verb)
		}
		if err != nil {
			fmt.Fprintf(stderr, "resmongw %s: %v\n%s\n", verb, err, p.logHint)
			return 1
		}
		fmt.Fprintf(stdout, "ran:\n%s", indentLines(p.commands(verb)))
		return 0
	}
}

func installService(p *servicePlatform, bin string, existing []byte, installed, dryRun, noStart bool, stdout, stderr io.Writer) int {
	if installed && bytes.Equal(existing, []byte(p.rendered)) {
		fmt.Fprintf(stdout, "already installed: %s is up to date (%s).\n", p.filePath, bin)
		if !noStart {
			fmt.Fprintln(stdout, "Start it with 'resmongw start' if it is not running; check with 'resmongw status'.")
		}
		return 0
	}
	if strings.Contains(bin, string(os.PathSeparator)+"go-build") {
		fmt.Fprintf(stderr, "warning: %s looks like a temporary 'go run' build; the service will break when it is cleaned up. Prefer 'go install' or 'go build -o'.\n", bin)
	}
	startVerb := "start"
	if installed {
		startVerb = "restart" // the running daemon still has the old unit's binary
	}
	cmds := p.commands("install")
	if !noStart {
		cmds = append(cmds, p.commands(startVerb)...)
	}
	if dryRun {
		action := "would write"
		if installed {
			action = "would replace (it differs)"
		}
		fmt.Fprintf(stdout, "%s %s:\n%s\nwould run:\n%s", action, p.filePath, p.rendered, indentLines(cmds))
		// The check a real install starts with, so a dry run also tells whether it would work
		// here. It only asks the service manager; nothing is written.
		if err := p.preflight(); err != nil {
			fmt.Fprintf(stderr, "warning: a real install would stop here:\n%v\n", err)
		}
		return 0
	}
	if err := p.preflight(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if installed {
		// kardianos refuses to install over an existing file; move it aside and put it
		// back if the install fails, so a failed upgrade leaves the old unit working.
		if err := os.Remove(p.filePath); err != nil {
			fmt.Fprintf(stderr, "resmongw install: %v\n", err)
			return 1
		}
	}
	s, err := service.New(noopProgram{}, p.config)
	if err == nil {
		err = s.Install()
	}
	if err != nil {
		if installed {
			_ = os.WriteFile(p.filePath, existing, 0o644)
		}
		fmt.Fprintf(stderr, "resmongw install: %v\n", err)
		return 1
	}
	if got, err := os.ReadFile(p.filePath); err != nil || string(got) != p.rendered {
		// Cannot happen unless kardianos' template engine diverges from ours.
		fmt.Fprintf(stderr, "warning: %s differs from what 'resmongw install --dry-run' prints; please report this.\n", p.filePath)
	}
	verbWord := "wrote"
	if installed {
		verbWord = "updated"
	}
	fmt.Fprintf(stdout, "%s %s (ExecStart: %s %s)\n", verbWord, p.filePath, bin, strings.Join(serviceArgs, " "))
	if !noStart {
		if startVerb == "restart" {
			err = s.Restart()
		} else {
			err = s.Start()
		}
		if err != nil {
			fmt.Fprintf(stdout, "ran:\n%s", indentLines(p.commands("install")))
			fmt.Fprintf(stderr, "resmongw install: installed, but %s failed: %v\n%s\n", startVerb, err, p.logHint)
			return 1
		}
	}
	fmt.Fprintf(stdout, "ran:\n%s", indentLines(cmds))
	fmt.Fprintln(stdout, "Check it with 'resmongw status'; configure a harness with 'resmongw config <harness>'.")
	return 0
}

func indentLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// noServiceFix is printed when no per-user service can be installed.
const noServiceFix = `resmongw does not need the service to work: harnesses run 'resmongw stdio',
which starts the daemon on demand. To run it yourself instead:
  resmongw serve
`
