package packaging

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kardianos/service"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/systemd"
)

// forceSystemd makes kardianos use systemd even where its detection says otherwise
// (containers, WSL): we only ever install a *user* unit, and preflight checks that the
// user manager really answers.
type forceSystemd struct{ service.System }

func (forceSystemd) Detect() bool { return true }

func newPlatform(bin string) (*servicePlatform, error) {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return nil, fmt.Errorf("%w (systemctl is not on PATH)", errUnsupported)
	}
	for _, s := range service.AvailableSystems() {
		if s.String() == "linux-systemd" {
			service.ChooseSystem(forceSystemd{s})
			break
		}
	}
	unit, err := RenderUnit(bin)
	if err != nil {
		return nil, err
	}
	home, err := paths.Home(os.Getenv)
	if err != nil {
		return nil, err
	}
	return &servicePlatform{
		kind:     "systemd user unit",
		filePath: paths.ServiceFile(home), // the shim checks this same path
		rendered: unit,
		config: &service.Config{
			Name:        systemd.Name,
			DisplayName: systemd.Name,
			Description: serviceDescription,
			Executable:  bin,
			Arguments:   serviceArgs,
			Option: service.KeyValue{
				"UserService":   true,
				"SystemdScript": systemd.Unit,
				"Restart":       "on-failure",
			},
		},
		preflight: userBusPreflight,
		commands: func(verb string) []string {
			u := systemd.UnitName
			switch verb {
			case "install":
				return []string{"systemctl enable --user " + u, "systemctl daemon-reload --user"}
			case "uninstall":
				return []string{"systemctl stop --user " + u, "systemctl disable --user " + u, "systemctl daemon-reload --user"}
			default:
				return []string{"systemctl " + verb + " --user " + u}
			}
		},
		logHint: "See why with: systemctl --user status resmongw; journalctl --user -u resmongw (start failures); the daemon's log: resmongw status --verbose names it (beside the socket)",
	}, nil
}

// userBusPreflight checks that `systemctl --user` can reach the user's service manager.
// Over ssh without pam_systemd, under su/sudo, or in a container there is none, and
// systemctl's own error ("Failed to connect to bus") does not say what to do.
func userBusPreflight() error {
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		return noUserBus("XDG_RUNTIME_DIR is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", "--user", "show", "--property=Version").CombinedOutput()
	if err == nil {
		return nil
	}
	line := firstLine(string(out))
	if line == "" {
		line = err.Error()
	}
	if strings.Contains(line, "bus") || strings.Contains(line, "connect") {
		return noUserBus("systemctl --user: " + line)
	}
	return fmt.Errorf("systemctl --user does not work here: %s", line)
}

func noUserBus(why string) error {
	return fmt.Errorf(`resmongw: there is no systemd user session to install into (%s).

A per-user service needs your user's systemd manager, which exists only inside a real
login session. Any one of these fixes it:
  - log in through a real session (desktop, or ssh with pam_systemd), then run this again;
  - run 'loginctl enable-linger %s' once (as root or with sudo), so your user manager
    runs without a login, then run this again from a fresh login;
  - skip the service: harnesses run 'resmongw stdio', which starts the daemon on demand,
    or run 'resmongw serve' yourself`, why, currentUser())
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "$USER"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
