package bench

import (
	"errors"
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
