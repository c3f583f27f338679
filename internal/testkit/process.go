package testkit

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pollEvery is how often the waits below look again; it is no bound, only a poll period.
const pollEvery = 20 * time.Millisecond

// Proc is a child process reaped in the background from the start, so its exit can be
// awaited with a bound and it never lingers as a zombie.
type Proc struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd and begins reaping it.
func Start(cmd *exec.Cmd) (*Proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the exit error (nil for exit status 0); meaningful once Done is closed.
func (p *Proc) Err() error { return p.err }

// Stop sends SIGTERM (unless the process has exited already) and waits up to limit for the
// exit, then SIGKILLs and waits for that. It reports whether SIGTERM was ignored; Err then
// holds the exit status.
func (p *Proc) Stop(limit time.Duration) (ignoredTerm bool) {
	select {
	case <-p.done:
		return false
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return false
	case <-time.After(limit):
		_ = p.Cmd.Process.Kill()
		<-p.done
		return true
	}
}

// WaitListening waits up to limit until socket accepts a connection. When p (which may be
// nil) is the process meant to listen and it exits first, that is the error.
func WaitListening(socket string, limit time.Duration, p *Proc) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.Dial("unix", socket)
		if err == nil {
			c.Close()
			return nil
		}
		if p != nil {
			select {
			case <-p.done:
				return fmt.Errorf("exited before listening: %v", p.err)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v: %v", socket, limit, err)
		}
		time.Sleep(pollEvery)
	}
}

// Alive reports whether pid is a live process: one that exists and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc (or not readable): existence is all we know
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WaitGone waits up to limit for pid to stop being alive and reports whether it did.
func WaitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !Alive(pid) {
			return true
		}
		time.Sleep(pollEvery)
	}
	return !Alive(pid)
}

// killWait bounds the wait for a process to go after SIGKILL.
const killWait = 5 * time.Second

// StopPID stops a process that is not our child (an autostarted daemon, say): SIGTERM, up to
// limit for it to go, then SIGKILL. The error says the signal failed or SIGTERM was ignored;
// a process already gone is no error.
func StopPID(pid int, limit time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return nil
	} else if err != nil {
		return fmt.Errorf("stopping pid %d: %w", pid, err)
	}
	if WaitGone(pid, limit) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	WaitGone(pid, killWait)
	return fmt.Errorf("pid %d ignored SIGTERM for %v", pid, limit)
}

// ReadPIDFile reads the pid a daemon wrote into its lock file.
func ReadPIDFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s holds %q, not a pid", path, b)
	}
	return pid, nil
}

// ChildPIDs lists the live (non-zombie) processes whose parent is this process.
func ChildPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		if f := strings.Fields(s[i+2:]); len(f) > 1 && f[0] != "Z" && f[1] == me {
			out = append(out, pid)
		}
	}
	return out
}
