package sessionwire

import (
	"os"
	"strconv"
	"syscall"
)

// ReadyFDEnv names, in the environment of a daemon a client starts (the shim's autostart,
// `resmongw start`), the descriptor of an inherited pipe's write end that the daemon closes
// once it listens. The client waits for the pipe's end instead of dialling on a timer: it
// learns at once that the socket takes connections, and a daemon that fails to start ends
// the wait too, by exiting.
const ReadyFDEnv = "RESMONGW_READY_FD"

// SignalListening is the daemon's half: it closes the descriptor ReadyFDEnv names, if that is
// a pipe, and drops the variable so that nothing the daemon starts inherits it. Anything else
// under that number is left open: closing a descriptor of our own by mistake would be worse
// than a starter that waits.
func SignalListening() {
	v, ok := os.LookupEnv(ReadyFDEnv)
	if !ok {
		return
	}
	_ = os.Unsetenv(ReadyFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return
	}
	_ = syscall.Close(fd)
}
