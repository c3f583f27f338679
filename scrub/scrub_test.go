package scrub

import "testing"

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
