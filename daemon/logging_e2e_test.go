package daemon_test

import (
	"os"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// The log file is private and never holds the token, even after restarts and failures.
func TestLogFilePrivateAndTokenFree(t *testing.T) {
	t.Parallel()
	w, sim, ctx := servedWorld(t)
	s := w.connect(ctx, "2025-11-25", simEnv(sim)...)
	tokens := []string{sim.Token()}
	healthRuntimeID(ctx, t, s.cs)
	call(ctx, t, s.cs, "search_corpus", map[string]any{"query": "graph"})
	if err := sim.Restart(resmonsim.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	tokens = append(tokens, sim.Token())
	healthRuntimeID(ctx, t, s.cs)
	_ = sim.Stop()
	call(ctx, t, s.cs, "health", nil)
	out, _ := w.runStatus(ctx, simEnv(sim), "--json")

	testkit.WaitFor(t, testkit.WaitLimit, func() bool {
		b, _ := os.ReadFile(w.LogFile())
		return strings.Count(string(b), `"msg":"tool call"`) >= 4
	}, "four tool calls in the log")
	fi, err := os.Stat(w.LogFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log file mode %v (%v), want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(w.LogFile())
	leaks, err := testkit.TokenLeaks(tokens, testkit.Text{Name: "the log file", Body: string(b)}, testkit.Text{Name: "status output", Body: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaks) > 0 {
		t.Fatalf("%s contains a backend token", strings.Join(leaks, " and "))
	}
	if strings.Contains(string(b), `"graph"`) {
		t.Fatal("the log holds a tool argument value")
	}
}
