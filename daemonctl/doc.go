// Package daemonctl is the client side of the daemon's socket for the CLI: `resmongw status`
// and its printing, the stop and restart requests, waiting for a daemon to serve, and whether
// the per-user service runs it; the daemon package holds only the daemon.
package daemonctl
