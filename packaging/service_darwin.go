package packaging

import (
	"fmt"
	"os"
	"os/user"

	"github.com/kardianos/service"

	"github.com/resmongw/resmongw/launchd"
	"github.com/resmongw/resmongw/paths"
)

func newPlatform(bin string) (*servicePlatform, error) {
	// kardianos finds the LaunchAgents dir through user.Current, so we do too.
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	home := u.HomeDir
	plist, err := RenderPlist(bin, home)
	if err != nil {
		return nil, err
	}
	file := paths.ServiceFile(home) // the shim and status check this same path
	return &servicePlatform{
		kind:     "launchd agent",
		filePath: file,
		rendered: plist,
		config: &service.Config{
			Name:        launchd.Label,
			DisplayName: launchd.Label,
			Description: serviceDescription,
			Executable:  bin,
			Arguments:   serviceArgs,
			Option: service.KeyValue{
				"UserService":   true,
				"LaunchdConfig": launchd.Plist,
				"LogDirectory":  plistLogDir(home),
				"RunAtLoad":     true,
				"KeepAlive":     true,
			},
		},
		preflight: func() error {
			// launchd does not create the log directory; without it the agent fails to start.
			if err := os.MkdirAll(plistLogDir(home), 0o700); err != nil {
				return fmt.Errorf("resmongw: cannot create %s: %w", plistLogDir(home), err)
			}
			return nil
		},
		commands: func(verb string) []string {
			switch verb {
			case "install":
				return nil // kardianos only writes the plist; loading it is "start"
			case "start":
				return []string{"launchctl load " + file}
			case "stop":
				return []string{"launchctl unload " + file}
			case "restart":
				return []string{"launchctl unload " + file, "launchctl load " + file}
			case "uninstall":
				return []string{"launchctl unload " + file}
			}
			return nil
		},
		logHint: "See the logs in " + plistLogDir(home),
	}, nil
}
