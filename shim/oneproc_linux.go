package shim

import (
	"os"
	"runtime"
	"syscall"
)

// OneProc runs `resmongw stdio` again in this process (execve of our own binary, same pid,
// descriptors and arguments) with GOMAXPROCS=1 in its environment, unless GOMAXPROCS is set
// already: the runtime then has a single P from its first instruction, through every
// package's init, instead of from Main on. With one P per core during init, the inits'
// allocations land in as many per-P caches, each holding a partly used span of every size
// class it touched, and the main goroutine back from a system call goes on with whichever P
// is idle: the shim kept those pages for its whole life, and its private memory was 1.3 or
// 1.8 MiB by that chance alone (issue 12). The price is a second process start, once per
// session (on 2 loaded vCPUs, spawn to initialize answer went from 24 to 55 ms p50). An
// exec that fails (no /proc, a sandbox) changes nothing: the shim runs as it is. Main
// removes what was added here, so the daemon or service manager it starts does not inherit
// it.
func OneProc() {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) == 1 {
		return // the user's choice, or one P from the start already (one CPU, a CPU quota)
	}
	env := append(os.Environ(), "GOMAXPROCS=1", oneProcEnv+"=1")
	_ = syscall.Exec("/proc/self/exe", os.Args, env)
}
