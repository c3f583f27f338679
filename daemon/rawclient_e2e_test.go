package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/sessionwire"
)

// rawClientHelper is another user's client that makes none of the checks our own clients
// make before writing (sessionwire.Dial refuses a socket that is not ours, so resmongw run as
// that user never reaches the daemon): it is how a test reaches the daemon's own peer check.
const rawClientHelper = "raw-client"

// rawClientMain connects to the socket in arg ("<kind> <socket>"), writes a preamble of that
// kind and prints how many bytes came back before the daemon closed.
func rawClientMain(arg string) int {
	kind, socket, _ := strings.Cut(arg, " ")
	c, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	_, _ = c.Write(sessionwire.Line(sessionwire.NewPreamble(kind, func(string) string { return "" }, "raw-client")))
	n, err := io.Copy(io.Discard, c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		fmt.Println("read:", err)
		return 1
	}
	fmt.Printf("received %d bytes\n", n)
	return 0
}

// rawClientAsNobody runs rawClientMain as the user nobody (the test binary copied where nobody
// may run it: the build cache is root's) and returns what it printed.
func rawClientAsNobody(ctx context.Context, t *testing.T, kind, socket string) string {
	t.Helper()
	dir := testkit.ShortTempDir(t)
	_ = os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A hard link, not a copy: a copy's write descriptor is inherited by any child another
	// test forks while it is open, and until that child execs, running the copy fails with
	// "text file busy" (golang/go#22315; seen under load). A link opens nothing for writing.
	exe := filepath.Join(dir, "raw-client")
	if err := os.Link(self, exe); err != nil {
		t.Fatalf("linking the test binary where nobody may run it: %v", err)
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Dir = "/"
	cmd.Env = []string{"RESMONGW_TESTKIT_HELPER=" + rawClientHelper, "RESMONGW_TESTKIT_HELPER_ARG=" + kind + " " + socket, testkit.NoRaceExitSleep}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("raw client as nobody: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
