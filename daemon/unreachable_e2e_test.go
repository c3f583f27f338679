package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/toolfacts"
)

// Issue 25.4: with no daemon reachable, `resmongw stdio` stays up and answers the session
// itself (server/discover or initialize, tools/list, each tools/call with why and the fix),
// and once a daemon is up, the same shim process and session go on there, the very next call
// included, on both protocol families.
func TestSessionOutlivesNoDaemon(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"initialize", "2026-07-28"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sim := startSim(t)
			h := w.startRawHarness(append(simEnv(sim), "RESMONGW_NO_AUTOSTART=1")...)
			meta := open(t, h, family)

			before := toolsList(t, h, "list-before", meta, len(toolfacts.Rows))
			text := unreachableCall(t, h, "call-1", "health", meta)
			if !strings.Contains(text, "the daemon is not running") || !strings.Contains(text, "resmongw serve") || !strings.Contains(text, "resmongw start") {
				t.Fatalf("the answer does not say why and what to do: %s", text)
			}
			// A write is answered the same way: nothing can be sent.
			unreachableCall(t, h, "call-2", "create_watch_profile", meta)

			w.startDaemon()
			send(t, h, `{"jsonrpc":"2.0","id":"call-3","method":"tools/call","params":{"name":"health","arguments":{}`+meta+`}}`)
			text, isError := toolText(t, wait(t, h, `"call-3"`))
			if isError || !strings.Contains(text, sim.RuntimeID()) {
				t.Fatalf("the first call once the daemon is up: isError %v %s", isError, text)
			}
			if after := toolsList(t, h, "list-after", meta, len(toolfacts.Rows)); after != before {
				t.Fatalf("tools/list differs once the daemon serves it:\nwithout a daemon %s\nfrom the daemon  %s", before, after)
			}
			if other := h.Other(); len(other) > 0 {
				t.Fatalf("the shim wrote lines that answer nothing: %q", other)
			}
			if got := h.Stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "not running") {
				t.Fatalf("shim stderr %q: want one line saying why", got)
			}
			select {
			case <-h.Proc.Done():
				t.Fatalf("the shim exited: %v", h.Proc.Err())
			default:
			}
		})
	}
}

// Autostart fails (the socket's directory is writable by others, so nothing is started or
// sent there); the answer says so with the fix, and once the person applies it the next call
// starts the daemon and goes through, in the same session.
func TestSessionRecoversWhenAutostartIsFixed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.reapDaemonOnCleanup()
	sim := startSim(t)
	dir := filepath.Dir(w.Socket)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	h := w.startRawHarness(simEnv(sim)...)
	meta := open(t, h, "initialize")
	toolsList(t, h, "list", meta, len(toolfacts.Rows))
	text := unreachableCall(t, h, "call-1", "health", meta)
	if !strings.Contains(text, "writable by others") || !strings.Contains(text, "chmod 700 "+dir) {
		t.Fatalf("the answer does not say why and what to do: %s", text)
	}
	if w.DaemonPID() != 0 {
		t.Fatal("a daemon was started in a directory others can write")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	send(t, h, testkit.ToolCall(`"call-2"`, "health", ""))
	if text, isError := toolText(t, wait(t, h, `"call-2"`)); isError || !strings.Contains(text, sim.RuntimeID()) {
		t.Fatalf("the call after the fix: isError %v %s", isError, text)
	}
	if w.DaemonPID() == 0 {
		t.Fatal("no daemon was started")
	}
}

// The session's write policy holds without a daemon too: with --writes=off the writes are
// not listed (the same list the daemon gives once it is up) and a call of one is refused as
// the daemon refuses it, while a read says the daemon cannot be reached.
func TestSessionWithoutADaemonKeepsItsWritePolicy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sim := startSim(t)
	cmd := exec.Command(bin, "stdio", "--writes=off")
	cmd.Env = w.Env(append(simEnv(sim), "RESMONGW_NO_AUTOSTART=1")...)
	h, err := testkit.StartRawHarness(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.CloseStdin()
		if h.Proc.Stop(testkit.WaitLimit) {
			t.Errorf("the shim ignored SIGTERM")
		}
	})
	meta := open(t, h, "initialize")
	before := toolsList(t, h, "list-before", meta, len(toolfacts.ReadTools()))
	unreachableCall(t, h, "read", "health", meta)
	send(t, h, testkit.ToolCall(`"write"`, "create_watch_profile", `{"name":"X"}`))
	refused, isError := toolText(t, wait(t, h, `"write"`))
	if !isError || !strings.Contains(refused, "writes are turned off") {
		t.Fatalf("a write under --writes=off without a daemon: isError %v %s", isError, refused)
	}
	w.startDaemon()
	healthRuntimeID2(t, h, sim.RuntimeID())
	if after := toolsList(t, h, "list-after", meta, len(toolfacts.ReadTools())); after != before {
		t.Fatalf("tools/list differs once the daemon serves it:\nwithout a daemon %s\nfrom the daemon  %s", before, after)
	}
	send(t, h, testkit.ToolCall(`"write-after"`, "create_watch_profile", `{"name":"X"}`))
	if text, _ := toolText(t, wait(t, h, `"write-after"`)); text != refused {
		t.Fatalf("the daemon refuses the write otherwise:\nwithout a daemon %s\nfrom the daemon  %s", refused, text)
	}
	for _, r := range sim.Requests() {
		if r.Method != "GET" {
			t.Fatalf("a write reached resmon: %s %s", r.Method, r.Path)
		}
	}
}

// healthRuntimeID2 calls health on h and checks the answer names want.
func healthRuntimeID2(t *testing.T, h *testkit.RawHarness, want string) {
	t.Helper()
	send(t, h, testkit.ToolCall(`"health"`, "health", ""))
	if text, isError := toolText(t, wait(t, h, `"health"`)); isError || !strings.Contains(text, want) {
		t.Fatalf("health once the daemon is up: isError %v %s", isError, text)
	}
}

// open starts the session as a harness of family does and returns the _meta its requests
// carry ("" for initialize's family).
func open(t *testing.T, h *testkit.RawHarness, family string) string {
	t.Helper()
	if family == "initialize" {
		send(t, h, testkit.InitializeRequest(`"init"`, "2025-06-18", "outlives"))
		if a := wait(t, h, `"init"`); !strings.Contains(string(a), `"serverInfo"`) {
			t.Fatalf("initialize: %s", a)
		}
		send(t, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return ""
	}
	send(t, h, `{"jsonrpc":"2.0","id":"discover","method":"server/discover","params":{"_meta":`+stateless2026+`}}`)
	if a := wait(t, h, `"discover"`); !strings.Contains(string(a), `"result"`) {
		t.Fatalf("server/discover: %s", a)
	}
	return `,"_meta":` + stateless2026
}

// toolsList is the result of a tools/list (of want tools), as the shim wrote it.
func toolsList(t *testing.T, h *testkit.RawHarness, id, meta string, want int) string {
	t.Helper()
	params := ""
	if meta != "" {
		params = `,"params":{` + meta[1:] + `}`
	}
	send(t, h, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/list"`+params+`}`)
	var a struct {
		Result json.RawMessage `json:"result"`
	}
	line := wait(t, h, `"`+id+`"`)
	if json.Unmarshal(line, &a) != nil || a.Result == nil {
		t.Fatalf("tools/list: %s", line)
	}
	var l struct{ Tools []json.RawMessage }
	if json.Unmarshal(a.Result, &l) != nil || len(l.Tools) != want {
		t.Fatalf("tools/list: %d tools, want %d: %s", len(l.Tools), want, line)
	}
	return string(a.Result)
}

// unreachableCall calls tool (with valid arguments) and checks the answer is the tool error of
// a daemon that cannot be reached; it returns its message.
func unreachableCall(t *testing.T, h *testkit.RawHarness, id, tool, meta string) string {
	t.Helper()
	args := map[string]string{"health": `{}`, "create_watch_profile": `{"name":"X"}`}[tool]
	send(t, h, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+meta+`}}`)
	text, isError := toolText(t, wait(t, h, `"`+id+`"`))
	var p struct {
		Error   string
		Message string
		Detail  map[string]any
	}
	if !isError || json.Unmarshal([]byte(text), &p) != nil || p.Error != "internal_error" || p.Detail["reason"] != "DaemonUnavailable" ||
		!strings.Contains(p.Message, "cannot be reached") || !strings.Contains(p.Message, "tries the daemon again") {
		t.Fatalf("%s without a daemon: isError %v %s", tool, isError, text)
	}
	return p.Message
}
