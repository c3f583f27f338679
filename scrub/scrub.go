// Package scrub removes every backend API token this process has ever seen from text before it leaves the process.
package scrub

import (
	"bytes"
	"strings"
	"sync"
)

// Placeholder replaces a scrubbed secret.
const Placeholder = "[redacted]"

// maxSecrets bounds the registry; tokens rotate per backend start, so a long-lived
// daemon sees a handful a day. The oldest are dropped first.
const maxSecrets = 256

// minLen keeps short values out of the registry: scrubbing them would mangle ordinary text.
const minLen = 16

var (
	mu      sync.RWMutex
	secrets []string
)

// Add registers a secret (a token read from any token file, valid or stale) so that
// String and Bytes remove it from then on.
func Add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minLen {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for _, have := range secrets {
		if have == s {
			return
		}
	}
	if len(secrets) == maxSecrets {
		secrets = secrets[1:]
	}
	secrets = append(secrets, s)
}

// String returns s with every registered secret replaced by Placeholder.
func String(s string) string {
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Placeholder)
		}
	}
	return s
}

// Bytes returns b with every registered secret replaced by Placeholder. It returns b
// itself (no copy) when nothing matched.
func Bytes(b []byte) []byte {
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(Placeholder))
		}
	}
	return b
}

// Contains reports whether s holds any registered secret (for tests and assertions).
func Contains(s string) bool {
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}
