package main

import "github.com/resmongw/resmongw/trustfile"

// readPortFile is how `dev backend` reads a port file already in its --state-dir: the same
// checked read discovery uses (a regular file of the user's own, never through a symlink,
// and a FIFO refused at once: a plain read of one hung the command for ever), passed in
// because the simulator imports nothing of the gateway.
func readPortFile(path string) ([]byte, error) {
	return trustfile.ReadFile(path, trustfile.Public, 4096)
}
