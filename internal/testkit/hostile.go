package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Hostile is another user's listener on a loopback port (internal/testkit/hostile, run as
// OtherUID): what an attacker binds once a backend's port is free.
type Hostile struct {
	Port int
	out  *SyncBuffer
}

// StartHostile builds and starts the hostile listener as OtherUID on port (0: any) and
// waits until it listens. It is stopped when the test ends.
func StartHostile(t testing.TB, port int) *Hostile {
	t.Helper()
	NeedRoot(t)
	dir, err := os.MkdirTemp("", "rghostile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "hostile")
	ctx, cancel := context.WithTimeout(context.Background(), buildLimit)
	out, err := exec.CommandContext(ctx, "go", "build", "-o", exe, "github.com/resmongw/resmongw/internal/testkit/hostile").CombinedOutput()
	cancel()
	if err != nil {
		t.Fatalf("building the hostile listener: %v\n%s", err, out)
	}
	cmd := exec.Command(exe, "-port", strconv.Itoa(port))
	AsOtherUser(cmd)
	h := &Hostile{out: &SyncBuffer{}}
	cmd.Stdout = h.out
	stderr := &SyncBuffer{}
	cmd.Stderr = stderr
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	WaitFor(t, 30*time.Second, func() bool {
		select {
		case <-p.Done():
			t.Fatalf("hostile listener exited: %v\n%s", p.Err(), stderr.String())
		default:
		}
		return strings.HasPrefix(h.out.String(), "listening ")
	}, "the hostile listener to listen")
	first, _, _ := strings.Cut(h.out.String(), "\n")
	h.Port, _ = strconv.Atoi(strings.TrimPrefix(first, "listening "))
	return h
}

// Conns is how many connections reached the listener.
func (h *Hostile) Conns() int { return h.count("conn") }

// Requests is how many HTTP requests it read; TokenRequests how many carried a token.
func (h *Hostile) Requests() int { return h.count("request ") }

// TokenRequests is how many requests carried an Authorization header.
func (h *Hostile) TokenRequests() int {
	n := 0
	for _, l := range strings.Split(h.out.String(), "\n") {
		if strings.HasPrefix(l, "request ") && strings.HasSuffix(l, "auth=true") {
			n++
		}
	}
	return n
}

func (h *Hostile) count(prefix string) int {
	n := 0
	for _, l := range strings.Split(h.out.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
