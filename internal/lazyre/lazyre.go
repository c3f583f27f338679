// Package lazyre compiles a package-level regular expression on its first use instead of at init.
package lazyre

import (
	"regexp"
	"sync"
)

// Why: every process of the one binary runs every package's init, the shim included (one per
// harness session, for the session's life), so a pattern compiled at init was paid for, and its
// memory held, by processes that never use it (discovery's and packaging's patterns were 150
// and 130 KB of every process's start-up heap).

// New returns pattern's compiled form, compiled by the first call. A bad pattern panics there,
// as regexp.MustCompile does at init; every pattern is exercised by its package's tests.
func New(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
