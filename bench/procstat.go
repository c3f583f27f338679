package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SchedCPU is the CPU time all of a process's threads have spent running, in nanoseconds,
// from /proc/<pid>/task/*/schedstat (the scheduler's own accounting: exact, where
// /proc/<pid>/stat counts 10 ms ticks). Go does not end its threads, so the sum over the
// live ones is the process's total.
func SchedCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, errors.New("no schedstat (kernel without CONFIG_SCHEDSTATS?)")
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// Mem is a process's memory from /proc/<pid>/smaps_rollup, in bytes. Private is the memory
// only this process holds (Private_Clean + Private_Dirty): what one more such process costs
// the machine. RSS also counts pages shared with other processes (the binary's text).
type Mem struct {
	RSS, Private int64
}

// ReadMem reads a process's Mem.
func ReadMem(pid int) (Mem, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "Rss":
			m.RSS = n << 10
			seen++
		case "Private_Clean", "Private_Dirty":
			m.Private += n << 10
			seen++
		}
	}
	if seen < 3 {
		return Mem{}, errors.New("smaps_rollup without Rss/Private_Clean/Private_Dirty")
	}
	return m, nil
}

// BackendConns is the set of TCP connections (socket inodes) process pid holds to
// 127.0.0.1:port, from /proc/<pid>/fd and /proc/net/tcp. A connection that appears across a
// call is one the call (or a spare renewed at that moment) opened.
func BackendConns(pid, port int) (map[string]bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil {
			if in, ok := strings.CutPrefix(l, "socket:["); ok {
				mine[strings.TrimSuffix(in, "]")] = true
			}
		}
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf("0100007F:%04X", port)
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) >= 10 && f[2] == want && f[3] == "01" && mine[f[9]] {
			out[f[9]] = true
		}
	}
	return out, nil
}

// newIn counts the members of after that are not in before.
func newIn(before, after map[string]bool) int {
	n := 0
	for k := range after {
		if !before[k] {
			n++
		}
	}
	return n
}
