//go:build !race

package testkit

// Race is false without -race; see race_on.go.
const Race = false
