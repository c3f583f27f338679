package packaging

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/resmongw/resmongw/launchd"
	"github.com/resmongw/resmongw/systemd"
)

// serviceDescription is the unit's Description= line and the service's display text.
const serviceDescription = "resmon MCP gateway (resmongw)"

// serviceArgs are the arguments the service runs the binary with.
var serviceArgs = []string{"serve"}

// RenderUnit renders the systemd user unit for the binary at binPath (absolute), exactly
// as `resmongw install` writes it.
func RenderUnit(binPath string) (string, error) {
	if err := checkBinaryPath(binPath); err != nil {
		return "", err
	}
	// The same keys kardianos/service v1.3.0 passes its systemd templates, with the
	// values our Config produces, so a template edit that works here works there.
	data := map[string]any{
		"Description":       serviceDescription,
		"Path":              binPath,
		"Name":              systemd.Name,
		"Dependencies":      []string(nil),
		"Arguments":         serviceArgs,
		"ChRoot":            "",
		"WorkingDirectory":  "",
		"UserName":          "",
		"ReloadSignal":      "",
		"PIDFile":           "",
		"LogDirectory":      "/var/log",
		"OutputFileSupport": "",
		"LimitNOFILE":       "",
		"Restart":           "on-failure",
		"SuccessExitStatus": "",
		"EnvVars":           []string(nil),
	}
	return renderTemplate(systemd.Unit, data, map[string]func(string) string{
		"cmd":       func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` },
		"cmdEscape": func(s string) string { return strings.ReplaceAll(s, " ", `\x20`) },
	})
}

// RenderPlist renders the launchd LaunchAgent for the binary at binPath (absolute) and the
// user's home directory, exactly as `resmongw install` writes it on macOS.
func RenderPlist(binPath, home string) (string, error) {
	if err := checkBinaryPath(binPath); err != nil {
		return "", err
	}
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("home directory %q is not absolute", home)
	}
	out, errPath := plistLogPaths(home)
	data := map[string]any{
		"Name":              launchd.Label,
		"Path":              binPath,
		"Arguments":         serviceArgs,
		"ChRoot":            "",
		"UserName":          "",
		"WorkingDirectory":  "",
		"KeepAlive":         "true",
		"RunAtLoad":         "true",
		"SessionCreate":     "false",
		"StandardOutPath":   out,
		"StandardErrorPath": errPath,
		"EnvVars":           []string(nil),
	}
	esc := strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")
	return renderTemplate(launchd.Plist, data, map[string]func(string) string{"html": esc.Replace})
}

// plistLogDir is where the agent's stdout/stderr go; kardianos names the files
// <LogDirectory>/<Name>.{out,err}.log.
func plistLogDir(home string) string { return filepath.Join(home, launchd.LogDir) }

func plistLogPaths(home string) (stdout, stderr string) {
	d := plistLogDir(home)
	return d + "/" + launchd.Label + ".out.log", d + "/" + launchd.Label + ".err.log"
}

// checkBinaryPath refuses paths a unit file cannot carry verbatim: systemd expands % and $
// in ExecStart and gives \ and quotes meaning, so such a path would run something else.
func checkBinaryPath(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("binary path %q is not absolute", p)
	}
	for _, r := range p {
		if strings.ContainsRune(`%$\"'`, r) || unicode.IsControl(r) {
			return fmt.Errorf("binary path %q contains %q, which a service file cannot carry safely; move resmongw to a plain path (e.g. ~/go/bin) and run install again", p, r)
		}
	}
	return nil
}
