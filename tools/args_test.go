package tools

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A required list: absent, null and "" are the required error; an empty list stays an empty
// (non-nil) list, so the backend gets [] rather than null.
func TestRequiredStringListArg(t *testing.T) {
	for _, args := range []map[string]any{{}, {"s": nil}, {"s": ""}} {
		if l, te := requiredStringListArg(args, "s"); te == nil || te.Message != "'s' is required." || l != nil {
			t.Errorf("%v → %v %v, want the required error", args, l, te)
		}
	}
	if l, te := requiredStringListArg(map[string]any{"s": []any{}}, "s"); te != nil || l == nil || len(l) != 0 {
		t.Errorf("empty list → %#v %v, want an empty non-nil list", l, te)
	}
	if l, te := requiredStringListArg(map[string]any{"s": []any{"a", "b"}}, "s"); te != nil || len(l) != 2 || l[1] != "b" {
		t.Errorf("list → %v %v", l, te)
	}
}

// Absent page arguments take their defaults; present ones are used as given (the schema has
// already bounded them).
func TestPageArgumentDefaults(t *testing.T) {
	if got := limitArg(map[string]any{}); got != 25 {
		t.Errorf("default limit %d", got)
	}
	if got := limitArg(map[string]any{"limit": json.Number("40")}); got != 40 {
		t.Errorf("limit 40 → %d", got)
	}
	if got := OffsetArg(map[string]any{"offset": nil}); got != 0 {
		t.Errorf("null offset → %d", got)
	}
	if got := OffsetArg(map[string]any{"offset": json.Number("1e12")}); got != math.MaxInt32 {
		t.Errorf("huge offset → %d, want it capped (an empty page either way)", got)
	}
}

func TestPyRepr(t *testing.T) {
	cases := map[string]string{
		"fuzzy":   `'fuzzy'`,
		"it's":    `"it's"`,
		`a'b"c`:   `'a\'b"c'`,
		"x\ny":    `'x\ny'`,
		`back\sl`: `'back\\sl'`,
	}
	for in, want := range cases {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRedactDestinations(t *testing.T) {
	in := "SMTP refused jane.doe+x@example.org; wrote /home/jane/reports/out.md and C:\\Users\\j\\out; " +
		"POST https://hooks.example.org/abc?token=1 failed; see ~/resmon/feed.xml"
	got := redactDestinations(in)
	for _, leak := range []string{"jane.doe", "example.org", "/home/jane", "Users", "hooks", "~/resmon"} {
		if strings.Contains(got, leak) {
			t.Errorf("redacted text still holds %q: %s", leak, got)
		}
	}
	for _, mark := range []string{"<address>", "<target>", "<url>", "SMTP refused"} {
		if !strings.Contains(got, mark) {
			t.Errorf("redacted text lacks %q: %s", mark, got)
		}
	}
	if plain := "HTTP 503 from receiver"; redactDestinations(plain) != plain {
		t.Errorf("plain text changed: %s", redactDestinations(plain))
	}
}
