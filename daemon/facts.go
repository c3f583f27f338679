package daemon

// FetchStatus asks the daemon at socket for its status, as `resmongw status` does (the
// caller's environment getenv names its target): for `resmongw doctor`, which composes it
// with other facts. An error for which sessionwire.IsDown holds means no daemon runs.
func FetchStatus(socket string, getenv func(string) string) (*Status, error) {
	return fetchStatus(socket, getenv)
}
