// Package oneproc runs `resmongw stdio` again with GOMAXPROCS=1 before any package that allocates much has initialised.
package oneproc

// MarkerEnv marks the environment this package's exec made: its GOMAXPROCS=1 is ours, not the
// user's, and the shim removes both before it starts a daemon or a service manager.
const MarkerEnv = "RESMONGW_STDIO_ONE_P"
