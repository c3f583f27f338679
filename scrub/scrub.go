// Package scrub removes every backend API token this process has ever seen from text before it leaves the process.
package scrub

import (
	"bytes"
	"strings"
	"sync"
)

// Placeholder replaces a scrubbed secret.
const Placeholder = "[redacted]"

// maxSecrets bounds the registry's unheld entries; tokens rotate per backend start, so a
// long-lived daemon sees a handful a day. When it is full, the least recently seen token
// that nothing holds is dropped; a held token is never dropped, however many others arrive.
const maxSecrets = 256

// minLen keeps short values out of the registry: scrubbing them would mangle ordinary text.
const minLen = 16

type entry struct {
	s     string
	b     []byte
	holds int
}

var (
	mu      sync.RWMutex
	secrets []*entry // least recently added or held first
)

// Add registers a secret (a token read from any token file, valid or stale) so that String
// and Bytes remove it from then on. Adding a known secret again makes it the most recent, so
// a token that keeps being read is the last to be dropped.
func Add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minLen {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	touch(s)
	evict()
}

// Hold registers s like Add and keeps it registered until release is called (once; more
// calls do nothing). Whatever uses a token (a watcher's verified backend, a client of its
// generation) holds it, so eviction can only ever drop tokens nothing uses.
func Hold(s string) (release func()) {
	s = strings.TrimSpace(s)
	if len(s) < minLen {
		return func() {}
	}
	mu.Lock()
	e := touch(s)
	e.holds++
	evict()
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			e.holds--
			evict()
			mu.Unlock()
		})
	}
}

// touch finds or appends s and moves it to the most recent end. mu is held.
func touch(s string) *entry {
	for i, e := range secrets {
		if e.s == s {
			copy(secrets[i:], secrets[i+1:])
			secrets[len(secrets)-1] = e
			return e
		}
	}
	e := &entry{s: s, b: []byte(s)}
	secrets = append(secrets, e)
	return e
}

// evict drops the oldest unheld entries while the registry is over its bound. mu is held.
func evict() {
	for len(secrets) > maxSecrets {
		i := 0
		for i < len(secrets) && secrets[i].holds > 0 {
			i++
		}
		if i == len(secrets) {
			return // every entry is in use: the bound gives way, never a live token
		}
		secrets = append(secrets[:i], secrets[i+1:]...)
	}
}

// String returns s with every registered secret replaced by Placeholder.
func String(s string) string {
	mu.RLock()
	defer mu.RUnlock()
	for _, e := range secrets {
		if strings.Contains(s, e.s) {
			s = strings.ReplaceAll(s, e.s, Placeholder)
		}
	}
	return s
}

// Bytes returns b with every registered secret replaced by Placeholder. It returns b
// itself (no copy) when nothing matched.
func Bytes(b []byte) []byte {
	mu.RLock()
	defer mu.RUnlock()
	for _, e := range secrets {
		if bytes.Contains(b, e.b) {
			b = bytes.ReplaceAll(b, e.b, []byte(Placeholder))
		}
	}
	return b
}

// Contains reports whether s holds any registered secret (for tests and assertions).
func Contains(s string) bool {
	mu.RLock()
	defer mu.RUnlock()
	for _, e := range secrets {
		if strings.Contains(s, e.s) {
			return true
		}
	}
	return false
}
