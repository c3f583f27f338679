//go:build linux

package shim_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// environOf is a process's environment as it was exec'd (Unsetenv does not change it).
func environOf(t *testing.T, pid string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\x00")
}

// The shim runs itself again with one P from its first instruction (internal/oneproc): the same
// process serves the harness, and the daemon it starts inherits none of it. A GOMAXPROCS the
// user set is left alone.
func TestShimRunsWithOnePFromItsStart(t *testing.T) {
	for _, c := range []struct {
		name, env string
		oneP      bool
	}{{"unset", "", true}, {"set by the user", "GOMAXPROCS=2", false}} {
		t.Run(c.name, func(t *testing.T) {
			w := newServiceWorld(t, false, "start")
			cmd := exec.Command(bin, "stdio")
			cmd.Env = w.env
			if c.env != "" {
				cmd.Env = append(cmd.Env, c.env)
			}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			p, err := testkit.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Stop(5 * time.Second) })
			if _, err := stdin.Write([]byte(testkit.InitializeRequest(`"boot"`, "2025-06-18", "t") + "\n")); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || !strings.Contains(line, `"id":"boot","result"`) {
				t.Fatalf("initialize answer %q (%v)", line, err)
			}
			shimEnv := environOf(t, strconv.Itoa(cmd.Process.Pid))
			if got := slices.Contains(shimEnv, "GOMAXPROCS=1"); got != c.oneP {
				t.Errorf("the shim runs with GOMAXPROCS=1 from its start: %v, want %v", got, c.oneP)
			}
			pid, err := testkit.ReadPIDFile(w.lockFile())
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range environOf(t, strconv.Itoa(pid)) {
				if kv == "GOMAXPROCS=1" || strings.HasPrefix(kv, "RESMONGW_STDIO_ONE_P=") {
					t.Errorf("the daemon the shim started inherited %s", kv)
				}
			}
			stdin.Close()
			select {
			case <-p.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("the shim did not end with its stdin")
			}
		})
	}
}
