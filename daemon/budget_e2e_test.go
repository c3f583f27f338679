package daemon_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/resmonsim"
)

// connectAs is a harness named client launching `resmongw stdio` with args.
func (w *world) connectAs(ctx context.Context, client string, env []string, args ...string) *mcp.ClientSession {
	w.T.Helper()
	cmd := exec.Command(bin, append([]string{"stdio"}, args...)...)
	cmd.Env = w.Env(env...)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit}, nil)
	if err != nil {
		w.T.Fatalf("connect: %v\nshim stderr: %s", err, stderr)
	}
	w.T.Cleanup(func() { _ = cs.Close() })
	return cs
}

// The budget crosses processes: the client's name from initialize reaches the daemon through
// the shim, and `resmongw stdio --max-output` travels in the preamble and wins over it.
func TestBudgetThroughTheShim(t *testing.T) {
	w := newWorld(t)
	sim, err := resmonsim.Start(resmonsim.Options{StateDir: filepath.Join(t.TempDir(), "resmon"), Papers: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	w.startDaemon()
	ctx := testCtx(t)
	args := map[string]any{"query": "model", "limit": 100}
	whole := call(ctx, t, w.connectAs(ctx, "e2e", simEnv(sim)), "search_corpus", args)
	if _, cut := whole.payload["left_out"]; cut || len(whole.payload["papers"].([]any)) != 100 {
		t.Fatalf("a page of 100 papers for a client with the default budget: %v", whole.payload["left_out"])
	}
	for _, c := range []struct {
		client string
		flags  []string
		budget int
		who    string
	}{
		{"codex-mcp-client", nil, mcpserver.CodexBudget, "Codex"},
		{"claude-code", []string{"--max-output", "3000"}, 3000, "--max-output"},
		{"e2e", []string{"--max-output=5000"}, 5000, "--max-output"},
	} {
		cs := w.connectAs(ctx, c.client, simEnv(sim), c.flags...)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_corpus", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		r := call(ctx, t, cs, "search_corpus", args)
		note, _ := r.payload["left_out"].(map[string]any)
		why, _ := note["why"].(string)
		if res.IsError || len(text) > c.budget || !strings.Contains(why, fmt.Sprintf("%d bytes %s", c.budget, c.who)) {
			t.Fatalf("%s %v: %d bytes, note %v", c.client, c.flags, len(text), note)
		}
	}
}
