//go:build race

package testkit

// Race is true when this package is built with -race, that is, under `go test -race`: the
// binary is then built with -race too, so the daemon's and the shim's own goroutines are
// checked, not only the test process.
const Race = true
