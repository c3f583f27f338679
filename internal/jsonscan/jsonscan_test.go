package jsonscan

import (
	"testing"

	"github.com/resmongw/resmongw/internal/testkit"
)

// TestMain exits without the race detector's second of sleep at exit (testkit.Exit).
func TestMain(m *testing.M) { testkit.Main(m) }

// Each value's end is found from its first byte, strings with escaped quotes and brackets
// inside them included; a value that does not end, or no value at all, is -1.
func TestValueFindsTheEndOfEachKind(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`"a\"b"`, 6},
		{`"a\\"x`, 5},
		{`{"k":[1,"]}",{}]},1`, 17},
		{`[[]]]`, 4},
		{`-1.5e3,`, 6},
		{`true}`, 4},
		{"null\t", 4},
		{`"open`, -1},
		{`{"k":[1]`, -1},
		{`,`, -1},
		{``, -1},
	} {
		if got := Value([]byte(c.in), 0); got != c.want {
			t.Errorf("Value(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if got := Space([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("Space = %d, want 5", got)
	}
	if got := String([]byte(`"ab"c`), 0); got != 4 {
		t.Errorf("String = %d, want 4", got)
	}
}
