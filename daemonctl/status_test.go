package daemonctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/statusdoc"
)

// With the service installed, a stopped daemon is started, not installed again.
func TestStatusNotRunningSuggestsStartWhenInstalled(t *testing.T) {
	home := t.TempDir()
	socket := filepath.Join(t.TempDir(), "mcp.sock")
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	var out strings.Builder
	notRunning(&out, socket, false, true, getenv, nil)
	if !strings.Contains(out.String(), "resmongw install") || !strings.Contains(out.String(), "resmongw serve") {
		t.Errorf("not installed:\n%s", out.String())
	}
	unit := paths.ServiceFile(home)
	if unit == "" {
		t.Skip("no per-user service on this system")
	}
	if err := os.MkdirAll(filepath.Dir(unit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	notRunning(&out, socket, false, true, getenv, nil)
	if !strings.Contains(out.String(), "resmongw start") || strings.Contains(out.String(), "resmongw install") {
		t.Errorf("installed:\n%s", out.String())
	}
	out.Reset()
	notRunning(&out, socket, true, true, getenv, nil)
	var v map[string]any
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil || v["service_installed"] != true || v["running"] != false {
		t.Errorf("json: %s (%v)", out.String(), err)
	}
}

// The verbose form names each token file with its presence (never a value: the document has
// none); the short form marks an idle target as not counted.
func TestStatusFormsShowTokenPresenceAndIdleTargets(t *testing.T) {
	st := &statusdoc.Status{Targets: []statusdoc.TargetStatus{
		{Key: "a", Caller: true, Tokens: []statusdoc.TokenStatus{{Port: 1001, File: "/s/api-token-1001", Presence: statusdoc.TokenPresent}}},
		{Key: "b", Idle: true},
	}}
	var verbose, short bytes.Buffer
	renderVerbose(&verbose, st, time.Now())
	if !strings.Contains(verbose.String(), statusdoc.TokenPresent+" (/s/api-token-1001)") {
		t.Errorf("verbose status:\n%s", verbose.String())
	}
	renderStatus(&short, st, time.Now())
	if !strings.Contains(short.String(), "target 2 (idle") || strings.Contains(short.String(), "target 1 (idle") {
		t.Errorf("short status:\n%s", short.String())
	}
}

// status warns of a private daemon only when it was pointed away from the per-user default,
// and says how it was.
func TestPrivateDaemonNoteOnlyOffTheDefault(t *testing.T) {
	def, err := paths.DefaultSocket()
	if err != nil {
		t.Skip(err)
	}
	other := filepath.Join(t.TempDir(), "mcp.sock")
	getenv := func(string) string { return "" }
	for _, c := range []struct {
		socket, flag, want string
	}{
		{def, "", ""},
		{def, def, ""},
		{other, "", "RESMONGW_SOCKET is set"},
		{other, other, "--socket names a socket"},
	} {
		var out strings.Builder
		privateDaemonNote(&out, c.socket, c.flag, getenv)
		if c.want == "" && out.Len() > 0 || !strings.Contains(out.String(), c.want) {
			t.Errorf("socket %s, --socket %q: %q, want %q", c.socket, c.flag, out.String(), c.want)
		}
	}
}
