package launchd_test

import (
	"strings"
	"testing"

	"github.com/resmongw/resmongw/launchd"
)

// Issue 10.8 on macOS: what launchd allows of the unit's hardening: a private umask and no
// core files. (The rendered plist's structure is checked by packaging's render tests.)
func TestPlistIsHardened(t *testing.T) {
	flat := strings.Join(strings.Fields(launchd.Plist), "")
	for _, want := range []string{
		"<key>Umask</key><integer>63</integer>",
		"<key>SoftResourceLimits</key><dict><key>Core</key><integer>0</integer></dict>",
		"<key>HardResourceLimits</key><dict><key>Core</key><integer>0</integer></dict>",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("plist lacks %s", want)
		}
	}
}
