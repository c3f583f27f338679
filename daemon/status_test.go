package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/statusdoc"
)

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
	want := map[int]string{1001: statusdoc.TokenPresent, 1002: statusdoc.TokenEmpty, 1003: statusdoc.TokenEmpty, 1004: statusdoc.TokenMalformed,
		1005: statusdoc.TokenMalformed, 1006: statusdoc.TokenUntrusted, 1007: statusdoc.TokenAbsent, 1008: statusdoc.TokenUntrusted}
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
	if got := tokenPresence(st); len(got) != 1 || got[0].Presence != statusdoc.TokenMalformed {
		t.Fatalf("verified: %+v", got)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), token) {
		t.Fatalf("status carries the token: %s", b)
	}
}

// The exit code follows the caller's target and the targets sessions use; idle ones are shown
// but not counted.
func TestTargetsOKIgnoresIdleTargets(t *testing.T) {
	caller := func(v bool) statusdoc.TargetStatus {
		return statusdoc.TargetStatus{Caller: true, Counted: true, Verified: v}
	}
	uncounted := func(v bool) statusdoc.TargetStatus { return statusdoc.TargetStatus{Caller: true, Verified: v} }
	used := func(v bool) statusdoc.TargetStatus {
		return statusdoc.TargetStatus{Sessions: 2, Counted: true, Verified: v}
	}
	idle := func(v bool) statusdoc.TargetStatus { return statusdoc.TargetStatus{Idle: true, Verified: v} }
	for _, c := range []struct {
		ts   []statusdoc.TargetStatus
		want bool
	}{
		{[]statusdoc.TargetStatus{caller(true)}, true},
		{[]statusdoc.TargetStatus{caller(false)}, false},
		{[]statusdoc.TargetStatus{caller(true), idle(false), idle(false)}, true},
		{[]statusdoc.TargetStatus{caller(true), used(false)}, false},
		{[]statusdoc.TargetStatus{caller(true), used(true), idle(false)}, true},
		{[]statusdoc.TargetStatus{caller(false), idle(true)}, false},
		{[]statusdoc.TargetStatus{used(true), idle(true)}, false},      // no caller target: shutting down
		{[]statusdoc.TargetStatus{uncounted(false), used(true)}, true}, // a plain status beside the demo
		{[]statusdoc.TargetStatus{uncounted(false), used(false)}, false},
		{nil, false},
	} {
		if got := targetsOK(c.ts); got != c.want {
			t.Errorf("%+v: %v, want %v", c.ts, got, c.want)
		}
	}
}
