package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// RunUser is a private /run/user for the processes a test starts through Wrap: each runs in a
// mount namespace of its own (its children inherit it) in which Dir is mounted over /run/user.
// The per-user default socket is then the test's own while being the real one: the
// gateway finds it from the uid alone, as logind's runtime directory /run/user/<uid>, and no
// two tests (nor the real user's daemon) share it. The test reads and dials the same files
// at their paths under Dir.
type RunUser struct {
	Dir     string // stands in for /run/user
	Runtime string // Dir/<uid>: the user's runtime directory as logind makes it (ours, 0700)
}

// NewRunUser makes root/run/user/<uid> and returns it as a RunUser. It skips the test unless
// this system lets it mount in a new mount namespace (Linux, root, unshare(1) and mount(8)
// installed): the tests that need the per-user default run as root, as CI does.
func NewRunUser(t testing.TB, root string) *RunUser {
	t.Helper()
	if _, err := runUserCommand(); err != nil {
		t.Skipf("needs a private /run/user for the per-user default socket: %v", err)
	}
	r := &RunUser{Dir: filepath.Join(root, "run", "user")}
	r.Runtime = filepath.Join(r.Dir, strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(r.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(r.Runtime, 0o700); err != nil { // whatever the umask made of it
		t.Fatal(err)
	}
	return r
}

// Socket is the per-user default socket the gateway finds under the private /run/user, as the
// test sees it.
func (r *RunUser) Socket() string { return filepath.Join(r.Runtime, "resmongw", "mcp.sock") }

// Wrap makes cmd run with Dir mounted over /run/user. The process keeps its pid: unshare and
// the shell each exec the next, so waiting on, signalling and reading the parent of cmd's
// process work as without Wrap.
func (r *RunUser) Wrap(cmd *exec.Cmd) *exec.Cmd {
	prefix, err := runUserCommand()
	if err != nil {
		panic(err) // NewRunUser skipped the test
	}
	cmd.Args = append(append(slices.Clone(prefix), r.Dir, cmd.Path), cmd.Args[1:]...)
	cmd.Path = prefix[0]
	return cmd
}

// runUserCommand is the command line that runs "$@" with "$0" mounted over /run/user, once it
// has been seen to work here.
var runUserCommand = sync.OnceValues(func() ([]string, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("mount namespaces are Linux's")
	}
	if os.Getuid() != 0 {
		return nil, errors.New("mounting in a mount namespace needs root")
	}
	if fi, err := os.Stat("/run/user"); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("no /run/user directory to mount over: %v", err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, err
	}
	mount, err := exec.LookPath("mount")
	if err != nil {
		return nil, err
	}
	if strings.ContainsRune(mount, '\'') {
		return nil, fmt.Errorf("mount(8) at %q", mount)
	}
	cmd := []string{unshare, "--mount", "--propagation", "private", "/bin/sh", "-c",
		"'" + mount + `' --bind "$0" /run/user && exec "$@"`}
	// A trial: the same mount of an empty directory, then a command that checks it.
	probe, err := os.MkdirTemp("", "runuser-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(probe)
	if err := os.WriteFile(filepath.Join(probe, "seen"), nil, 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.Command(cmd[0], append(cmd[1:], probe, "/bin/sh", "-c", "test -e /run/user/seen")...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("unshare --mount: %v: %s", err, out)
	}
	return cmd, nil
})

// privateRunUserMark is the file that says this process already sees the private /run/user
// MainWithBinary gives a package's tests; the real /run/user never holds it.
const privateRunUserMark = "/run/user/.resmongw-tests"

// withPrivateRunUser runs this test binary again, same pid, arguments and environment, with
// an empty private /run/user of its own (a tmpfs in a mount namespace, holding only our uid's
// runtime directory), unless it already has one. Every process a test starts inherits it, so a
// test that forgets its socket (RESMONGW_SOCKET, --socket or RunUser.Wrap) gets this
// throw-away default instead of the real user's per-user socket: no test can start a daemon
// there. Where mount namespaces are not available (not root) it does nothing, and the tests
// that need the default skip (NewRunUser).
func withPrivateRunUser() {
	if _, err := os.Stat(privateRunUserMark); err == nil {
		return
	}
	prefix, err := runUserCommand()
	if err != nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	uid := strconv.Itoa(os.Getuid())
	argv := []string{prefix[0], "--mount", "--propagation", "private", "/bin/sh", "-c",
		"mount -t tmpfs -o mode=0755,size=1m resmongw-tests /run/user && mkdir -m 0700 /run/user/" + uid +
			" && : >" + privateRunUserMark + ` && exec "$@"`, "sh", exe}
	err = syscall.Exec(prefix[0], append(argv, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "testkit: running the tests with a private /run/user: %v\n", err)
	os.Exit(2)
}
