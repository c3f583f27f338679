//go:build linux

package shim_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Issue 12: a shim whose daemon dies brings one back exactly as at the start: with the unit
// installed it asks the service manager again (not a second, unmanaged daemon), and the
// harness's session goes on on the service's new daemon.
func TestReconnectStartsTheInstalledServiceAgain(t *testing.T) {
	w := newServiceWorld(t, true, "start")
	cmd := w.runUser.Wrap(exec.Command(bin, "stdio"))
	cmd.Env = w.env
	h, err := testkit.StartRawHarness(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.CloseStdin(); h.Proc.Stop(10 * time.Second) })
	if err := h.Send(testkit.InitializeRequest("1", "2025-06-18", "svc")); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitIDs(30*time.Second, "1"); err != nil {
		t.Fatal(err)
	}
	if err := h.Send(testkit.InitializedNotification); err != nil {
		t.Fatal(err)
	}
	pid, err := testkit.ReadPIDFile(w.lockFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitGone(pid, 10*time.Second) {
		t.Fatal("the killed daemon is still alive")
	}
	if err := h.Send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitIDs(30*time.Second, "2"); err != nil {
		t.Fatal(err)
	}
	if a, _ := h.Answer("2"); string(a) != `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n" {
		t.Fatalf("ping after the reconnect: %s", a)
	}
	if calls := w.systemctlCalls(); len(calls) != 2 || calls[1] != "--user start resmongw.service" {
		t.Fatalf("systemctl calls %q, want the service started again", calls)
	}
	if args := w.daemonArgs(); hasArg(args, "--socket") {
		t.Fatalf("the new daemon %q was spawned by the shim, not started as the service", args)
	}
	if got := h.Stderr.String(); got != "" {
		t.Fatalf("shim stderr %q", got)
	}
}
