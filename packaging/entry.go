// Package packaging installs resmongw as a per-user service and writes harness configurations.
package packaging

import "io"

// ServiceMain runs `resmongw install|uninstall|start|stop|restart [--dry-run]`: the
// per-user service (a systemd user unit on Linux, a launchd agent on macOS).
func ServiceMain(verb string, args []string, stdout, stderr io.Writer) int {
	return runService(verb, args, stdout, stderr)
}

// ConfigMain runs `resmongw config <harness> [--write] [--force] [--no-approvals]
// [--scope user|project] [--state-dir DIR] [--port N] [--name NAME] [--file PATH]`: print, or
// merge into the harness's own files, the entry that launches `resmongw stdio` and the
// harness's approval settings for resmon's tools (reads pre-approved, writes always asking).
func ConfigMain(args []string, stdout, stderr io.Writer) int {
	return runConfig(args, stdout, stderr)
}
