package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// ExternalSim is the simulated backend in a process of its own (`resmongw dev backend`), the
// way the real app runs beside the daemon: the baseline client and the daemon then both cross
// a process boundary to reach it, and its CPU is not the benchmark's.
type ExternalSim struct {
	Proc     *testkit.Proc
	StateDir string
	BaseURL  string
	Port     int
	token    string
}

var listeningLine = regexp.MustCompile(`listening on (http://127\.0\.0\.1:(\d+))`)

// StartExternalSim runs bin's simulator with its state in stateDir and waits for the line that
// says where it listens (written after its port and token files are in place).
func StartExternalSim(bin, stateDir string) (*ExternalSim, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "dev", "backend", "--state-dir", stateDir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p, err := testkit.Start(cmd)
	if err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		if first {
			close(lines)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(15 * time.Second):
		p.Stop(time.Second)
		return nil, fmt.Errorf("external simulator: no start line within 15s")
	}
	m := listeningLine.FindStringSubmatch(line)
	if m == nil {
		p.Stop(time.Second)
		return nil, fmt.Errorf("external simulator: unexpected start line %q", line)
	}
	port, _ := strconv.Atoi(m[2])
	tok, err := os.ReadFile(filepath.Join(stateDir, "api-token-"+m[2]))
	if err != nil {
		p.Stop(time.Second)
		return nil, fmt.Errorf("external simulator: %w", err)
	}
	return &ExternalSim{Proc: p, StateDir: stateDir, BaseURL: m[1], Port: port, token: strings.TrimSpace(string(tok))}, nil
}

// Token is the simulator's bearer token (for the direct baseline only).
func (s *ExternalSim) Token() string { return s.token }

// Pid is the simulator's process id.
func (s *ExternalSim) Pid() int { return s.Proc.Pid() }

// Stop ends the simulator.
func (s *ExternalSim) Stop() { s.Proc.Stop(5 * time.Second) }
