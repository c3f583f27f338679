package systemd_test

import (
	"strings"
	"testing"

	"github.com/resmongw/resmongw/systemd"
)

// Issue 10.8: the unit carries the hardening a trusted user daemon gets. (That the rendered
// unit verifies cleanly is TestRenderUnitVerifiesWithSystemdAnalyze in packaging.)
func TestUnitIsHardened(t *testing.T) {
	keys := map[string]string{}
	section := ""
	for _, line := range strings.Split(systemd.Unit, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]" && strings.Contains(line, "=") && !strings.HasPrefix(line, "#"):
			k, v, _ := strings.Cut(line, "=")
			keys[k] = v
		}
	}
	for k, v := range map[string]string{
		"UMask": "0077", "NoNewPrivileges": "yes", "LimitCORE": "0", "MemoryMax": "1G",
		"LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "RestrictSUIDSGID": "yes",
	} {
		if keys[k] != v {
			t.Errorf("[Service] %s=%q, want %q", k, keys[k], v)
		}
	}
}
