package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// The attacks of issue 10, each as a second local user (nobody) would make it, against a
// real daemon, shim and simulator. Every test also runs the world's end-of-test checks (no
// token in any output, log or file under HOME).

func message(r result) string { s, _ := r.payload["message"].(string); return s }

// 10.3: resmon crashes (its port file and token stay behind) and another user binds the
// freed port. Reads and writes are backend_unavailable saying why, and not one request,
// let alone one carrying the token, reaches the attacker, although the gateway does connect
// (that is how it learns who is listening).
func TestAttackHostileListenerOnTheBackendsPort(t *testing.T) {
	t.Parallel()
	testkit.NeedRoot(t)
	w, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	port := sim.Port()
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	h := testkit.StartHostile(t, port)

	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"health", nil},
		{"run_sweep", map[string]any{"query": "protein folding", "sources": []any{"arxiv"}}},
		{"update_settings", map[string]any{"group": "ai", "settings": map[string]any{"temperature": 0.2}}},
	} {
		r := s.call(ctx, c.name, c.args)
		if r.code() != backend.CodeBackendUnavailable {
			t.Fatalf("%s with another user on the port: %v %v, want backend_unavailable", c.name, r.code(), r.payload)
		}
	}
	// The watcher's verdict, once it has looked again, names the cause.
	r := s.eventually(ctx, 30*time.Second, "health", nil, func(r result) bool {
		return strings.Contains(message(r), "not resmon run by you")
	}, "untrusted_listener")
	if !strings.Contains(message(r), "uid 65534") {
		t.Errorf("message does not name the owner: %q", message(r))
	}
	if !strings.Contains(w.runStatus(ctx, simEnv(sim)...), string(discovery.ReasonUntrustedListener)) {
		t.Errorf("status does not show %s", discovery.ReasonUntrustedListener)
	}
	if h.Conns() == 0 {
		t.Fatal("the gateway never connected, so this test proved nothing")
	}
	if n, tok := h.Requests(), h.TokenRequests(); n != 0 || tok != 0 {
		t.Fatalf("the attacker's listener got %d requests, %d with the token", n, tok)
	}
}

// 10.1: a state directory other users can write, a token file others can read, and the
// issue's attack (token file a symlink to the victim's real token): refused with a reason
// naming the path, what was found and the fix; the backend gets no request.
func TestAttackUntrustedStateFiles(t *testing.T) {
	t.Parallel()
	w, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	dir := sim.StateDir()

	expect := func(what string, wants ...string) {
		t.Helper()
		sim.ResetRequests()
		r := s.eventually(ctx, 30*time.Second, "health", nil, func(r result) bool {
			return strings.Contains(message(r), "cannot be trusted")
		}, what+" refused")
		for _, want := range wants {
			if !strings.Contains(message(r), want) {
				t.Fatalf("%s: message %q lacks %q", what, message(r), want)
			}
		}
		// Once refused, a refused view sends nothing.
		sim.ResetRequests()
		s.call(ctx, "search_corpus", map[string]any{"query": "graph"})
		if n := len(toolRequests(sim)); n != 0 {
			t.Fatalf("%s: %d requests reached the backend", what, n)
		}
		if out := w.runStatus(ctx, simEnv(sim)...); !strings.Contains(out, string(discovery.ReasonUntrustedFile)) {
			t.Fatalf("%s: status does not show %s:\n%s", what, discovery.ReasonUntrustedFile, out)
		}
	}
	fixed := func() {
		t.Helper()
		s.eventually(ctx, 30*time.Second, "health", nil, ok, "verified again")
	}

	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	expect("state dir 0777", dir, "mode 0777", "chmod 700 "+dir)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fixed()

	tf := sim.TokenFile()
	if err := os.Chmod(tf, 0o644); err != nil {
		t.Fatal(err)
	}
	expect("token file 0644", tf, "mode 0644", "chmod 600 "+tf)
	if out := w.runStatus(ctx, simEnv(sim)...); !strings.Contains(out, `"presence": "untrusted"`) {
		t.Fatalf("status does not show the token file as untrusted:\n%s", out)
	}
	if err := os.Chmod(tf, 0o600); err != nil {
		t.Fatal(err)
	}
	fixed()

	real := filepath.Join(t.TempDir(), "elsewhere")
	b, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := tf + ".link"
	if err := os.Symlink(real, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, tf); err != nil {
		t.Fatal(err)
	}
	expect("symlinked token file", tf, "symbolic link")
}

// 10.1 as the attacker made it: another user owns the state directory's contents
// they planted (a port file of theirs): refused, never read.
func TestAttackPortFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	testkit.NeedRoot(t)
	_, sim, ctx, s := servedSession(t)
	s.must(ctx, "health", nil)
	pf := filepath.Join(sim.StateDir(), discovery.PortFileName)
	if err := os.Chown(pf, testkit.OtherUID, testkit.OtherUID); err != nil {
		t.Fatal(err)
	}
	r := s.eventually(ctx, 30*time.Second, "health", nil, func(r result) bool {
		return strings.Contains(message(r), "belongs to another user")
	}, "a port file of uid 65534 refused")
	if !strings.Contains(message(r), pf) || !strings.Contains(message(r), "65534") {
		t.Fatalf("message %q does not name the file and its owner", message(r))
	}
}

// 10.2: a FIFO where the port file belongs. Every call answers (refused, naming the FIFO)
// instead of hanging, and SIGTERM still stops the daemon within the shutdown bound (the
// world's process helper fails the test if SIGTERM is ignored for 15 s).
func TestAttackFIFOPortFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.startDaemon()
	sim := w.startSim(resmonsim.Options{})
	ctx := testkit.Context(t, 120*time.Second)
	pf := filepath.Join(sim.StateDir(), discovery.PortFileName)
	if err := os.Remove(pf); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pf, 0o600); err != nil {
		t.Fatal(err)
	}
	s := w.connect(ctx, simEnv(sim)...)
	for i := 0; i < 3; i++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r := s.call(cctx, "health", nil)
		cancel()
		if r.code() != backend.CodeBackendUnavailable || !strings.Contains(message(r), "a FIFO") {
			t.Fatalf("call %d with a FIFO port file: %v %v", i, r.code(), r.payload)
		}
	}
	if out := w.runStatus(ctx, simEnv(sim)...); !strings.Contains(out, "a FIFO") {
		t.Fatalf("status does not name the FIFO:\n%s", out)
	}
	if ignored := d.Stop(testkit.WaitLimit); ignored {
		t.Fatal("the daemon ignored SIGTERM with a FIFO port file")
	}
	if ee, isExit := d.Err().(*exec.ExitError); d.Err() != nil && (!isExit || ee.ExitCode() != 0) {
		t.Fatalf("daemon exit after SIGTERM: %v", d.Err())
	}
}
