package shim

import "testing"

// --max-output is a size in bytes: a negative one is a usage error, refused before anything is
// dialled; a valid one is what the options (and so every preamble of the process) carry.
func TestMaxOutputFlag(t *testing.T) {
	if code := Main(Options{Writes: "ask", MaxOutput: -1}, nil); code != 2 {
		t.Fatalf("--max-output -1: exit %d, want 2", code)
	}
	var o Options
	if err := Flags(&o).Parse([]string{"--max-output=20000"}); err != nil || o.MaxOutput != 20000 || o.Writes != "ask" {
		t.Fatalf("--max-output=20000: %v, %+v", err, o)
	}
}
