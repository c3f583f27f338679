package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/mcpserver"
	"github.com/resmongw/resmongw/resmonsim"
)

// The write policy across real processes: a go-sdk client launches `resmongw stdio
// --writes=…`, the daemon (another process) asks through the shim, and the simulator says
// whether resmon got the write. mcpserver/confirm_test.go covers every branch in process.

type confirmClient struct {
	version string
	writes  string // --writes; "" leaves the flag out (the default)
	elicit  func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	manual  bool // input_required results come back as they are
}

func (w *world) connectConfirm(ctx context.Context, sim *resmonsim.Sim, c confirmClient) *mcp.ClientSession {
	w.T.Helper()
	args := []string{"stdio"}
	if c.writes != "" {
		args = append(args, "--writes="+c.writes)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = w.Env(simEnv(sim)...)
	cmd.Stderr = w.output()
	w.mu.Lock()
	w.shims = append(w.shims, cmd)
	w.mu.Unlock()
	opts := &mcp.ClientOptions{ElicitationHandler: c.elicit}
	if c.manual {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-confirm", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testkit.WaitLimit},
		&mcp.ClientSessionOptions{ProtocolVersion: c.version})
	if err != nil {
		w.T.Fatalf("connect: %v", err)
	}
	w.T.Cleanup(func() { w.closeSession(cs, cmd) })
	if got := cs.InitializeResult().ProtocolVersion; got != c.version {
		w.T.Fatalf("negotiated %s, want %s", got, c.version)
	}
	return cs
}

// activations counts the activate requests resmon received for routine 2.
func activations(sim *resmonsim.Sim) int {
	n := 0
	for _, r := range sim.Requests() {
		if r.Method == "POST" && r.Path == "/api/routines/2/activate" {
			n++
		}
	}
	return n
}

// activate2 is a new params value each time: the client writes its _meta into the one it is given.
func activate2() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "activate_routine", Arguments: map[string]any{"routine_id": 2}}
}

// confirmText is a refusal's reason (detail.reason of its conflict code) and message; for any
// other error, its code.
func confirmText(t *testing.T, res *mcp.CallToolResult) (reason, message string) {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	var e struct {
		Error   string         `json:"error"`
		Message string         `json:"message"`
		Detail  map[string]any `json:"detail"`
	}
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &e)
	if res.IsError && e.Error == "" {
		t.Fatalf("error without a code: %+v", res)
	}
	if r, ok := e.Detail["reason"].(string); ok && e.Error == backend.CodeConflict {
		return r, e.Message
	}
	return e.Error, e.Message
}

func TestConfirmAcrossProcesses(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.startDaemon()
			sim := w.startSim(resmonsim.Options{})
			ctx := testkit.Context(t, 90*time.Second)

			var forms atomic.Int32
			reply := func(action string, content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					forms.Add(1)
					if !strings.Contains(req.Params.Message, "activate_routine") {
						t.Errorf("form message %q does not name the tool", req.Params.Message)
					}
					return &mcp.ElicitResult{Action: action, Content: content}, nil
				}
			}

			// The default is ask: a decline sends nothing.
			no := w.connectConfirm(ctx, sim, confirmClient{version: version, elicit: reply("decline", nil)})
			res, err := no.CallTool(ctx, activate2())
			if err != nil {
				t.Fatal(err)
			}
			if code, msg := confirmText(t, res); code != mcpserver.ReasonNotConfirmed || !strings.Contains(msg, "declined") {
				t.Fatalf("decline answered %s %q", code, msg)
			}
			if n := activations(sim); n != 0 || forms.Load() != 1 {
				t.Fatalf("after a decline: %d writes, %d forms", n, forms.Load())
			}

			// Yes with remember: sent, and the next call in that session is not asked.
			yes := w.connectConfirm(ctx, sim, confirmClient{version: version, writes: "ask",
				elicit: reply("accept", map[string]any{"confirm": true, "remember": true})})
			for range 2 {
				res, err := yes.CallTool(ctx, activate2())
				if err != nil || res.IsError {
					t.Fatalf("confirmed write: %v %+v", err, res)
				}
			}
			if n := activations(sim); n != 2 || forms.Load() != 2 {
				t.Fatalf("after yes+remember: %d writes, %d forms; want 2 and 2", n, forms.Load())
			}

			// harness: no gateway question.
			h := w.connectConfirm(ctx, sim, confirmClient{version: version, writes: "harness", elicit: reply("decline", nil)})
			if res, err := h.CallTool(ctx, activate2()); err != nil || res.IsError {
				t.Fatalf("--writes=harness: %v %+v", err, res)
			}
			if n := activations(sim); n != 3 || forms.Load() != 2 {
				t.Fatalf("after harness: %d writes, %d forms; want 3 and 2", n, forms.Load())
			}

			// off: the writes are not listed, and refused.
			off := w.connectConfirm(ctx, sim, confirmClient{version: version, writes: "off", elicit: reply("accept", map[string]any{"confirm": true})})
			list, err := off.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range list.Tools {
				if tl.Name == "activate_routine" {
					t.Fatal("activate_routine listed under --writes=off")
				}
			}
			res, err = off.CallTool(ctx, activate2())
			if err != nil {
				t.Fatal(err)
			}
			if code, _ := confirmText(t, res); code != mcpserver.ReasonWritesOff {
				t.Fatalf("--writes=off answered %q", code)
			}

			// A client that cannot be asked: refused; its reads work.
			mute := w.connectConfirm(ctx, sim, confirmClient{version: version})
			res, err = mute.CallTool(ctx, activate2())
			if err != nil {
				t.Fatal(err)
			}
			if code, msg := confirmText(t, res); code != mcpserver.ReasonNotConfirmed || !strings.Contains(msg, "--writes=harness") {
				t.Fatalf("no elicitation answered %s %q", code, msg)
			}
			if res, err := mute.CallTool(ctx, &mcp.CallToolParams{Name: "list_routines", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("a read failed: %v %+v", err, res)
			}
			if n := activations(sim); n != 3 || forms.Load() != 2 {
				t.Fatalf("in the end: %d writes, %d forms; want 3 and 2", n, forms.Load())
			}
		})
	}
}

// A bad --writes never opens a session.
func TestConfirmUnknownPolicyRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cmd := exec.Command(bin, "stdio", "--writes=maybe")
	cmd.Env = w.Env()
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(out), "want ask, harness or off") {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
}

// On 2026-07-28 the state is the daemon's promise, signed with a key it holds in memory: a
// daemon restarted between the question and the answer honours no state of the old one, so
// the yes sends nothing, and asking again works on the new daemon.
func TestConfirmStateDoesNotOutliveTheDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 2*time.Minute)
	cs := w.connectConfirm(ctx, sim, confirmClient{version: "2026-07-28", manual: true,
		elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}})
	res, err := cs.CallTool(ctx, activate2())
	if err != nil || !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("first round: %v %+v", err, res)
	}
	old := w.daemonPID()
	if err := syscall.Kill(first.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	yes := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	retry := &mcp.CallToolParams{Name: "activate_routine", Arguments: map[string]any{"routine_id": 2},
		InputResponses: mcp.InputResponseMap{"confirm": yes}, RequestState: res.RequestState}
	res2, err := cs.CallTool(ctx, retry) // the shim starts a new daemon and sends it there
	if err != nil {
		t.Fatal(err)
	}
	w.waitNewDaemon(t, old)
	if code, msg := confirmText(t, res2); code != mcpserver.ReasonNotConfirmed || !strings.Contains(msg, "does not match") {
		t.Fatalf("an old daemon's state answered %s %q", code, msg)
	}
	if n := activations(sim); n != 0 {
		t.Fatalf("resmon got %d writes", n)
	}
	// Asked again on the new daemon, the same yes goes through once.
	res3, err := cs.CallTool(ctx, activate2())
	if err != nil || !res3.NeedsInput() {
		t.Fatalf("asking again: %v %+v", err, res3)
	}
	retry.RequestState = res3.RequestState
	if res4, err := cs.CallTool(ctx, retry); err != nil || res4.IsError {
		t.Fatalf("confirmed retry: %v %+v", err, res4)
	}
	if res5, err := cs.CallTool(ctx, retry); err != nil || !res5.IsError {
		t.Fatalf("replayed retry: %v %+v", err, res5)
	}
	if n := activations(sim); n != 1 {
		t.Fatalf("resmon got %d writes, want 1", n)
	}
}
