//go:build race

package daemon_test

// raceBuild makes TestMain build the binary with -race too, so the daemon's and the shim's
// own goroutines are checked, not only the test process.
const raceBuild = true
