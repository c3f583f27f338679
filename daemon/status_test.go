package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/paths"
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

// Token presence says whether the file holds a usable token, never its value.
func TestTokenPresenceJudgesTheContent(t *testing.T) {
	dir := t.TempDir()
	token := "Tk_" + strings.Repeat("a1B2", 12)
	write := func(port int, content string) {
		if err := os.WriteFile(discovery.TokenFile(dir, port), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1001, token+"\n")
	write(1002, "")
	write(1003, "  \n")
	write(1004, "not a token!")
	write(1005, "short")
	if err := os.Mkdir(discovery.TokenFile(dir, 1006), 0o700); err != nil { // not a regular file: refused unread
		t.Fatal(err)
	}
	write(1008, token)
	if err := os.Chmod(discovery.TokenFile(dir, 1008), 0o644); err != nil { // readable by others: refused unread
		t.Fatal(err)
	}
	want := map[int]string{1001: TokenPresent, 1002: TokenEmpty, 1003: TokenEmpty, 1004: TokenMalformed,
		1005: TokenMalformed, 1006: TokenUntrusted, 1007: TokenAbsent, 1008: TokenUntrusted}
	st := discovery.State{Resolved: discovery.Resolved{StateDir: dir}}
	for port := 1001; port <= 1008; port++ {
		st.Candidates = append(st.Candidates, discovery.Candidate{Port: port})
	}
	got := tokenPresence(st)
	if len(got) != len(want) {
		t.Fatalf("%d entries: %+v", len(got), got)
	}
	for _, ts := range got {
		if ts.Presence != want[ts.Port] || ts.File != filepath.Join(dir, filepath.Base(ts.File)) {
			t.Errorf("port %d: %q (%s), want %q", ts.Port, ts.Presence, ts.File, want[ts.Port])
		}
	}
	// With a verified backend only its own port is checked.
	st.Backend = &discovery.Backend{Port: 1004}
	if got := tokenPresence(st); len(got) != 1 || got[0].Presence != TokenMalformed {
		t.Fatalf("verified: %+v", got)
	}
	b, _ := json.Marshal(got)
	var human bytes.Buffer
	renderVerbose(&human, &Status{Targets: []TargetStatus{{Key: "k", State: st, Tokens: tokenPresence(discovery.State{
		Resolved: st.Resolved, Candidates: []discovery.Candidate{{Port: 1001}}})}}}, time.Now())
	if strings.Contains(string(b)+human.String(), token) || !strings.Contains(human.String(), TokenPresent+" (") {
		t.Fatalf("status output:\n%s\n%s", b, human.String())
	}
}

// The exit code follows the caller's target and the targets sessions use; idle ones are shown
// but not counted.
func TestTargetsOKIgnoresIdleTargets(t *testing.T) {
	caller := func(v bool) TargetStatus { return TargetStatus{Caller: true, Counted: true, Verified: v} }
	uncounted := func(v bool) TargetStatus { return TargetStatus{Caller: true, Verified: v} }
	used := func(v bool) TargetStatus { return TargetStatus{Sessions: 2, Counted: true, Verified: v} }
	idle := func(v bool) TargetStatus { return TargetStatus{Idle: true, Verified: v} }
	for _, c := range []struct {
		ts   []TargetStatus
		want bool
	}{
		{[]TargetStatus{caller(true)}, true},
		{[]TargetStatus{caller(false)}, false},
		{[]TargetStatus{caller(true), idle(false), idle(false)}, true},
		{[]TargetStatus{caller(true), used(false)}, false},
		{[]TargetStatus{caller(true), used(true), idle(false)}, true},
		{[]TargetStatus{caller(false), idle(true)}, false},
		{[]TargetStatus{used(true), idle(true)}, false},      // no caller target: shutting down
		{[]TargetStatus{uncounted(false), used(true)}, true}, // a plain status beside the demo
		{[]TargetStatus{uncounted(false), used(false)}, false},
		{nil, false},
	} {
		if got := targetsOK(c.ts); got != c.want {
			t.Errorf("%+v: %v, want %v", c.ts, got, c.want)
		}
	}
	var out bytes.Buffer
	renderStatus(&out, &Status{Targets: []TargetStatus{{Key: "a", Caller: true}, {Key: "b", Idle: true}}}, time.Now())
	if !strings.Contains(out.String(), "target 2 (idle") || strings.Contains(out.String(), "target 1 (idle") {
		t.Fatalf("human status:\n%s", out.String())
	}
}
