package oneproc

import (
	"runtime"
	"syscall"
)

// Why: the shim runs once per harness session and serves one line at a time, so it wants one
// P, and it wants it from its first instruction, through every package's init. With one P per
// core during init, the inits' allocations (the binary links go-sdk, jsonschema,
// kardianos/service, cobra and the tool table) land in as many per-P caches, each holding a
// partly used span of every size class it touched, and the shim kept those pages for its whole
// life: its private memory was 1.3 or 1.8 MiB by that chance alone (issue 12). GOMAXPROCS must
// be in the environment when the runtime starts for that, so `resmongw stdio` runs itself again
// (execve of our own binary: same pid, descriptors and arguments) with it set. It does so here,
// in an init: Go initialises packages in import-path order as their imports are done, and this
// one imports only runtime and syscall, so the exec comes before the heavy inits run a first
// time (spawn to initialize answer: 17 ms p50 without the exec, 30 ms with it in the shim's
// Main). The arguments come from /proc because os is not initialised yet. A GOMAXPROCS the user
// set, a runtime with one P already (one CPU, a CPU quota) and every other subcommand are left
// alone; an exec that fails (no /proc, a sandbox) changes nothing.
func init() {
	if _, set := syscall.Getenv("GOMAXPROCS"); set || runtime.GOMAXPROCS(0) == 1 {
		return
	}
	args, ok := stdioArgs()
	if !ok {
		return
	}
	env := append(syscall.Environ(), "GOMAXPROCS=1", MarkerEnv+"=1")
	_ = syscall.Exec("/proc/self/exe", args, env)
}

// stdioArgs is this process's argv when it is `resmongw stdio …` (stdio as the first
// argument, as cmd/resmongw's fast path dispatches it).
func stdioArgs() ([]string, bool) {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var raw []byte
	var buf [4096]byte
	for {
		n, err := syscall.Read(fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n == 0 {
			break
		}
		raw = append(raw, buf[:n]...)
	}
	var args []string
	for len(raw) > 0 {
		i := 0
		for i < len(raw) && raw[i] != 0 {
			i++
		}
		args = append(args, string(raw[:i]))
		if i < len(raw) {
			i++
		}
		raw = raw[i:]
	}
	return args, len(args) >= 2 && args[1] == "stdio"
}
