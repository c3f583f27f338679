package proxy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLimitAndOffsetArgs(t *testing.T) {
	limits := []struct {
		in   any
		want int
	}{
		{nil, 25}, {10000, 100}, {0, 1}, {-5, 1}, {"12", 12}, {" 12 ", 12}, {12.7, 12},
		{json.Number("12"), 12}, {json.Number("30.9"), 30}, {"abc", 25}, {true, 1}, {false, 1},
		{[]any{1}, 25}, {float64(100), 100}, {101, 100}, {"1e3", 25},
	}
	for _, c := range limits {
		args := map[string]any{"limit": c.in}
		if c.in == nil {
			args = map[string]any{}
		}
		if got := limitArg(args); got != c.want {
			t.Errorf("limit %#v → %d, want %d", c.in, got, c.want)
		}
	}
	offsets := []struct {
		in   any
		want int
	}{
		{nil, 0}, {5, 5}, {"7", 7}, {-3, 0}, {"x", 0}, {json.Number("40"), 40}, {2.9, 2},
	}
	for _, c := range offsets {
		if got := offsetArg(map[string]any{"offset": c.in}); got != c.want {
			t.Errorf("offset %#v → %d, want %d", c.in, got, c.want)
		}
	}
}

func TestIntArg(t *testing.T) {
	ok := []struct {
		in   any
		want int64
	}{{7, 7}, {"7", 7}, {" 7 ", 7}, {json.Number("7"), 7}, {7.0, 7}, {json.Number("7.0"), 7}}
	for _, c := range ok {
		got, te := intArg(map[string]any{"exec_id": c.in}, "exec_id")
		if te != nil || got != c.want {
			t.Errorf("%#v → %d, %v; want %d", c.in, got, te, c.want)
		}
	}
	required := []map[string]any{{}, {"exec_id": nil}, {"exec_id": ""}}
	for _, args := range required {
		_, te := intArg(args, "exec_id")
		if te == nil || te.Code != CodeInvalidArgument || te.Message != "'exec_id' is required." {
			t.Errorf("%v → %v", args, te)
		}
	}
	// A boolean or fractional id is refused rather than read as 1 or truncated.
	for _, bad := range []any{"x", 7.5, true, []any{1}, map[string]any{}, "1e3", json.Number("1e400")} {
		_, te := intArg(map[string]any{"exec_id": bad}, "exec_id")
		if te == nil || te.Message != "'exec_id' must be a whole number." {
			t.Errorf("%#v → %v", bad, te)
		}
	}
}

func TestStringListAndFlagArgs(t *testing.T) {
	l, te := stringListArg(map[string]any{"s": []any{"a", "b"}}, "s")
	if te != nil || len(l) != 2 {
		t.Errorf("list: %v %v", l, te)
	}
	l, te = stringListArg(map[string]any{"s": "arxiv"}, "s")
	if te != nil || len(l) != 1 || l[0] != "arxiv" {
		t.Errorf("single string should be a one-element list, got %v %v", l, te)
	}
	if _, te = stringListArg(map[string]any{"s": []any{"a", 1}}, "s"); te == nil {
		t.Error("a list with a number was accepted")
	}
	for in, want := range map[any]bool{true: true, false: false, "true": true, " FALSE ": false, "True": true} {
		got, ok, te := flagArg(map[string]any{"f": in}, "f")
		if te != nil || !ok || got != want {
			t.Errorf("flag %#v → %v %v %v", in, got, ok, te)
		}
	}
	for _, bad := range []any{"maybe", "", 1, "yes"} {
		if _, _, te := flagArg(map[string]any{"f": bad}, "f"); te == nil || te.Message != "'f' requires true or false." {
			t.Errorf("flag %#v → %v", bad, te)
		}
	}
	if _, ok, te := flagArg(map[string]any{}, "f"); ok || te != nil {
		t.Error("absent flag should be absent")
	}
}

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
	if l, te := requiredStringListArg(map[string]any{"s": "arxiv"}, "s"); te != nil || len(l) != 1 || l[0] != "arxiv" {
		t.Errorf("single string → %v %v", l, te)
	}
	if _, te := requiredStringListArg(map[string]any{"s": []any{"a", 1}}, "s"); te == nil || te.Message != "'s' must be a list of strings." {
		t.Errorf("a list with a number → %v", te)
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
