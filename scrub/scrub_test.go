package scrub

import (
	"strconv"
	"strings"
	"testing"
)

func TestScrubRemovesRegisteredTokens(t *testing.T) {
	tok := "tok_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	if got := String("x" + tok + "y"); got != "x"+tok+"y" {
		t.Fatalf("unregistered token was changed: %q", got)
	}
	Add(tok)
	Add("short") // too short to be a token: must not be registered
	if got := String("x" + tok + "y short"); got != "x[redacted]y short" {
		t.Fatalf("String = %q", got)
	}
	if got := string(Bytes([]byte(tok + tok))); got != "[redacted][redacted]" {
		t.Fatalf("Bytes = %q", got)
	}
	if !Contains("a"+tok) || Contains("nothing here") {
		t.Fatal("Contains is wrong")
	}
}

func fakeToken(prefix string, i int) string {
	return prefix + strings.Repeat("x", 30) + strconv.Itoa(i)
}

// Issue 10.5: token files rewritten often on other targets pushed the live token out of
// the FIFO registry, and 60 of 118 echoed answers carried it. A held token survives any
// number of others; a token added again is refreshed; eviction still bounds unheld ones.
func TestHeldTokenIsNeverEvicted(t *testing.T) {
	live := fakeToken("live_", 0)
	release := Hold(live)
	refreshed := fakeToken("refreshed_", 0)
	Add(refreshed)
	leaks := 0
	for i := 0; i < 118; i++ {
		for j := 0; j < 10; j++ {
			Add(fakeToken("other_", i*10+j)) // other targets' rotating tokens
		}
		Add(refreshed) // read again on every pass of its own target
		if Contains(live) == false || String("echo: "+live) != "echo: "+Placeholder {
			leaks++
		}
		if String(refreshed) != Placeholder {
			t.Fatalf("a token read on every pass was evicted after %d rounds", i)
		}
	}
	if leaks != 0 {
		t.Fatalf("%d of 118 answers echoed the live token unscrubbed", leaks)
	}
	mu.RLock()
	n := len(secrets)
	mu.RUnlock()
	if n > maxSecrets {
		t.Fatalf("registry holds %d entries, bound %d", n, maxSecrets)
	}
	if String(fakeToken("other_", 0)) == Placeholder {
		t.Fatal("the oldest unheld token was not evicted: the bound does not hold")
	}
	release()
	release() // a second call does nothing
	for i := 0; i < maxSecrets+1; i++ {
		Add(fakeToken("after_", i))
	}
	if Contains(live) {
		t.Fatal("a released token was kept past the bound")
	}
}
