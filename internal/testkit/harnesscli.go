package testkit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// HarnessCLI is the path of a harness's own command-line tool (codex, claude) for tests that
// have the harness read back what resmongw wrote: $envVar when set, else name on PATH. The
// test is skipped, with the reason and the install step, when neither is there.
func HarnessCLI(t testing.TB, name, envVar, install string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Skipf("%s is not installed, so the harness cannot read the config back (install: %s; or set %s to the binary)", name, install, envVar)
	return ""
}

// Install steps for the harness CLIs the tests use (the npm registry; versions pinned).
const (
	CodexInstall  = "npm install --prefix DIR @openai/codex@0.169.0, then put DIR/node_modules/.bin on PATH"
	ClaudeInstall = "npm install --prefix DIR @anthropic-ai/claude-code@2.1.328, then put DIR/node_modules/.bin on PATH"
)

// CodexAppServerCall starts `codex [global...] app-server` (Codex's own JSON-RPC front end,
// which loads config.toml exactly as Codex does), makes one request after the initialize
// handshake, and returns its result. The process ends when its input is closed.
func CodexAppServerCall(ctx context.Context, codex string, env []string, method string, params any, global ...string) (json.RawMessage, error) {
	cmd := exec.CommandContext(ctx, codex, append(global, "app-server")...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	enc := json.NewEncoder(stdin)
	for _, msg := range []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "resmongw-test", "version": "1"}}},
		{"jsonrpc": "2.0", "method": "initialized"},
		{"jsonrpc": "2.0", "id": 2, "method": method, "params": params},
	} {
		if err := enc.Encode(msg); err != nil {
			return nil, err
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != 2 {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("codex app-server %s: %s", method, m.Error)
		}
		return m.Result, nil
	}
	return nil, fmt.Errorf("codex app-server ended without answering %s: %v\n%s", method, sc.Err(), stderr.String())
}
