package daemon

import (
	"os"
	"testing"
)

// An autostarted daemon's stderr is /dev/null: a character device, but no terminal, so its
// log must stay buffered (a terminal gets it line by line).
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no character device here (%v): the test shows nothing", os.DevNull, err)
	}
	if isTerminal(f) {
		t.Fatalf("%s counted as a terminal: an autostarted daemon would log unbuffered", os.DevNull)
	}
}
