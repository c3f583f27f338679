package main

import (
	"strings"
	"testing"
)

// Issue 25.6h: no flag's help says its default twice (serve's --retry-wait said
// "(default 3s) (default 0s)"), and start, stop and restart have real help: what each does
// to which daemon, the service, the sessions, and the exit codes.
func TestHelpSaysEachDefaultOnceAndExplainsTheLifecycle(t *testing.T) {
	for _, c := range commands {
		_, out, _ := runCLI(append(strings.Fields(c), "--help")...)
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "(default 0s)") {
				t.Errorf("%s --help: %q", c, line)
			}
		}
	}
	_, out, _ := runCLI("serve", "--help")
	if !strings.Contains(out, "(default 3s)\n") || !strings.Contains(out, "(default 5m0s)\n") {
		t.Errorf("serve --help lost a default:\n%s", out)
	}
	for verb, says := range map[string][]string{
		"start":   {"service", "resmongw stdio", "RESMONGW_SOCKET", "Exit 0", "--dry-run"},
		"stop":    {"service", "sessions end", "RESMONGW_SOCKET", "exit 0", "--dry-run"},
		"restart": {"service", "reconnect", "RESMONGW_SOCKET", "Exit 0", "--dry-run"},
	} {
		_, out, _ := runCLI(verb, "--help")
		head, _, _ := strings.Cut(out, "Usage:")
		if len(strings.Fields(head)) < 60 {
			t.Errorf("%s --help is terse:\n%s", verb, head)
		}
		for _, s := range says {
			if !strings.Contains(head, s) {
				t.Errorf("%s --help does not mention %q:\n%s", verb, s, head)
			}
		}
	}
}
