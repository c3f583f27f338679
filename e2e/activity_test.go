package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/activity"
	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/daemon"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
)

// activityRecords runs `resmongw activity --json -n 0` and decodes what it printed.
func (w *world) activityRecords(t *testing.T) []activity.Record {
	t.Helper()
	cmd := exec.Command(bin, "activity", "--json", "-n", "0")
	cmd.Env = w.Env()
	b := w.output()
	cmd.Stdout, cmd.Stderr = b, b
	if err := cmd.Run(); err != nil {
		t.Fatalf("activity --json: %v\n%s", err, b)
	}
	var rs []activity.Record
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var r activity.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("activity --json printed %q: %v", sc.Text(), err)
		}
		rs = append(rs, r)
	}
	return rs
}

// Every call is recorded (who, which tool, read or write, how it ended) and shown by
// `resmongw activity`, live with -f; an argument value planted in every call is found nowhere
// in the daemon's state directory, its log or anything else under HOME.
func TestActivityRecordsEveryCallButNeverAnArgument(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	planted := "planted-" + testkit.NewToken(t)

	// -f from the start: the records arrive as the calls finish.
	follow := exec.Command(bin, "activity", "-f", "--json")
	follow.Env = w.Env()
	followed := w.output()
	follow.Stdout, follow.Stderr = followed, followed
	fp := w.start(follow)

	s.call(ctx, "search_corpus", map[string]any{"query": planted})
	s.call(ctx, "get_routine", map[string]any{"routine_id": planted})
	s.call(ctx, "create_watch_profile", map[string]any{"name": planted, "kind": "person"})
	if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{"x": planted}}); err != nil {
		t.Fatal(err)
	}
	// A client on protocol 2026-07-28 names itself in each request's _meta, not in initialize.
	meta := w.connectAs(ctx, &mcp.Implementation{Name: "meta-client", Version: "7.0"}, "2026-07-28", simEnv(sim)...)
	meta.must(ctx, "health", nil)

	rs := w.activityRecords(t)
	byTool := map[string]activity.Record{}
	for _, r := range rs {
		byTool[r.Tool] = r
		if r.Time.IsZero() || r.Session == 0 || r.Target == "" || r.Outcome == "" {
			t.Errorf("incomplete record %+v", r)
		}
	}
	want := map[string]func(activity.Record) bool{
		"search_corpus": func(r activity.Record) bool {
			return r.Client == "e2e" && r.ClientVersion == "1" && !r.Write && r.Outcome == "ok"
		},
		"get_routine":          func(r activity.Record) bool { return !r.Write && r.Outcome != "ok" },
		"create_watch_profile": func(r activity.Record) bool { return r.Write && r.Client == "e2e" },
		mcpserver.UnknownTool:  func(r activity.Record) bool { return r.Outcome == backend.CodeInvalidArgument },
		"health": func(r activity.Record) bool {
			return r.Client == "meta-client" && r.ClientVersion == "7.0" && r.Outcome == "ok"
		},
	}
	for tool, ok := range want {
		if r, found := byTool[tool]; !found || !ok(r) {
			t.Errorf("record of %s: %+v (found %v)", tool, r, found)
		}
	}
	testkit.WaitFor(t, 30*time.Second, func() bool {
		return strings.Count(followed.String(), `"tool":`) >= len(want)
	}, "activity -f to print every call")
	fp.Stop(testkit.WaitLimit)

	table := exec.Command(bin, "activity", "-n", "2")
	table.Env = w.Env()
	tb := w.output()
	table.Stdout, table.Stderr = tb, tb
	if err := table.Run(); err != nil || !strings.Contains(tb.String(), "TOOL") || !strings.Contains(tb.String(), "health") ||
		strings.Contains(tb.String(), "search_corpus") || !strings.Contains(tb.String(), "meta-client 7.0") {
		t.Errorf("activity -n 2 (err %v):\n%s", err, tb)
	}

	t.Logf("activity -n 2:\n%s", tb)
	// Everything reaches the disk by the daemon's exit; then search every file it wrote.
	w.stopDaemon()
	file := daemon.ActivityFile(w.LogFile())
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("activity file: %v, mode %v; want 0600", err, fi)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"tool":"search_corpus"`) || !strings.Contains(string(b), `"client":"meta-client"`) {
		t.Errorf("the activity file lacks the calls:\n%s", b)
	}
	for _, dir := range []string{w.Home, filepath.Dir(w.Socket)} {
		for _, f := range testkit.FilesUnder(dir) {
			if strings.Contains(f.Body, planted) {
				t.Errorf("%s holds an argument value", f.Name)
			}
		}
	}
	if strings.Contains(followed.String(), planted) {
		t.Error("activity -f printed an argument value")
	}
}

// `activity -f` follows the record across a daemon restart (an upgrade's hand-over is one):
// the next daemon's calls are printed as they finish, and what the first daemon's record held
// is not printed a second time although the next daemon reloads it.
func TestActivityFollowGoesOnAcrossARestart(t *testing.T) {
	t.Parallel()
	w, _, ctx, s := servedSession(t)
	follow := exec.Command(bin, "activity", "-f", "--json")
	follow.Env = w.Env()
	followed := w.output()
	follow.Stdout, follow.Stderr = followed, followed
	fp := w.start(follow)

	s.must(ctx, "health", nil)
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		return strings.Contains(followed.String(), `"tool":"health"`)
	}, "activity -f to print the first daemon's call")
	w.stopDaemon()
	w.startDaemon()
	s.must(ctx, "list_routines", nil) // the session goes on on the new daemon
	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		return strings.Contains(followed.String(), `"tool":"list_routines"`)
	}, "activity -f to print the next daemon's call")
	select {
	case <-fp.Done():
		t.Fatalf("activity -f ended: %v\n%s", fp.Err(), followed)
	default:
	}
	if n := strings.Count(followed.String(), `"tool":"health"`); n != 1 {
		t.Errorf("the first daemon's call was printed %d times:\n%s", n, followed)
	}
	fp.Stop(testkit.WaitLimit)
	// The next daemon numbers its sessions on from the record's last: the session that went on
	// there is not given the number of one the record already holds.
	sessions := map[string]uint64{}
	for _, line := range strings.Split(followed.String(), "\n") {
		var r activity.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Tool != "" {
			sessions[r.Tool] = r.Session
		}
	}
	if sessions["list_routines"] <= sessions["health"] {
		t.Errorf("session numbers after the restart: %v; want the next daemon's above the first's", sessions)
	}
}
