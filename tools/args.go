package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/toolfacts"
)

// Argument values arrive as decoded JSON, so a number may be float64, json.Number or (from Go
// callers and tests) an int. By the time a handler reads them, Tool.Run has checked each one
// against the tool's schema (CheckArguments), so the readers below only pick values out: the
// type, enum and bounds are already right, and there is no second copy of those rules here.

// hasArg reports whether args carries a usable value for key: the reference treats a missing
// key, null and "" alike as absent ("'<key>' is required."). An empty list is present.
func hasArg(args map[string]any, key string) bool {
	v, ok := args[key]
	if !ok || v == nil {
		return false
	}
	if s, isStr := v.(string); isStr && s == "" {
		return false
	}
	return true
}

func requiredError(key string) *backend.ToolError {
	return backend.InvalidArgument(fmt.Sprintf("'%s' is required.", key))
}

// numberInt converts a JSON number (any of the decoded forms) to int64. With truncate false a
// number with a fractional part is refused.
func numberInt(v any, truncate bool) (int64, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		g, err := x.Float64()
		if err != nil {
			return 0, false
		}
		f = g
	case float64:
		f = x
	case float32:
		f = float64(x)
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, false
	}
	if !truncate && f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// intArg returns a required integer argument (an id).
func intArg(args map[string]any, key string) (int64, *backend.ToolError) {
	if !hasArg(args, key) {
		return 0, requiredError(key)
	}
	return checkedInt(args[key], key)
}

// checkedInt reads a value CheckArguments has passed as an integer. The refusal is only
// reachable by a caller that skipped Tool.Run.
func checkedInt(v any, key string) (int64, *backend.ToolError) {
	n, ok := numberInt(v, false)
	if !ok {
		return 0, backend.InvalidArgument(fmt.Sprintf("'%s' must be a whole number.", key))
	}
	return n, nil
}

// optionalIntArg is intArg for an optional key: ok is false when the key is absent.
func optionalIntArg(args map[string]any, key string) (n int64, ok bool, err *backend.ToolError) {
	if !hasArg(args, key) {
		return 0, false, nil
	}
	n, err = checkedInt(args[key], key)
	return n, err == nil, err
}

// limitArg is the page size: 25 when absent (the schema bounds it to 1..100).
func limitArg(args map[string]any) int {
	if n, ok, _ := optionalIntArg(args, "limit"); ok {
		return int(n)
	}
	return toolfacts.DefaultLimit
}

// OffsetArg is the page start: 0 when absent (the schema keeps it at 0 or more). An offset
// beyond any list is an empty page, so it is capped where an int is small.
func OffsetArg(args map[string]any) int {
	n, ok, _ := optionalIntArg(args, "offset")
	if !ok || n < 0 {
		return 0
	}
	return int(min(n, math.MaxInt32))
}

// stringArg returns a string argument ("" when absent).
func stringArg(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

// requiredStringArg is stringArg for a required key.
func requiredStringArg(args map[string]any, key string) (string, *backend.ToolError) {
	if !hasArg(args, key) {
		return "", requiredError(key)
	}
	return stringArg(args, key), nil
}

// requiredStringListArg reads a required array-of-strings argument: absent, null or "" is
// the required error. The list is never nil, so an empty one goes to the backend as [].
func requiredStringListArg(args map[string]any, key string) ([]string, *backend.ToolError) {
	if !hasArg(args, key) {
		return nil, requiredError(key)
	}
	if l := stringListArg(args, key); l != nil {
		return l, nil
	}
	return []string{}, nil
}

// stringListArg reads an array-of-strings argument (nil when absent).
func stringListArg(args map[string]any, key string) []string {
	items, ok := arrayItems(args[key])
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, e := range items {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// flagArg reads a boolean argument; ok is false when the key is absent or null. The schema
// admits only a JSON boolean: the reference's bool("false") was true, which turned a refusal
// into a yes, and a string is refused rather than guessed at.
func flagArg(args map[string]any, key string) (val, ok bool) {
	b, ok := args[key].(bool)
	return b, ok
}

// parseFlag accepts a JSON boolean or the strings "true"/"false" (trimmed, any case).
func parseFlag(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// pyTruthy is Python truthiness, used for backend flags that arrive as 0/1 integers (is_active).
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if n, ok := numberInt(v, true); ok {
		if n != 0 {
			return true
		}
		f, _ := valFloat(v)
		return f != 0
	}
	return true
}

// asFloat reads a JSON number as float64.
func valFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// asInt reads a backend JSON integer (json.Number, float64 or int).
func valInt(v any) (int64, bool) { return numberInt(v, false) }

// ValMap returns v as a JSON object, or nil.
func ValMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// ValList returns v as a JSON array, or nil.
func ValList(v any) []any {
	l, _ := v.([]any)
	return l
}

// pyRepr quotes s the way Python's repr does for the reference's messages: single quotes,
// unless s holds a single quote and no double quote.
func pyRepr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

// page returns rows[offset : offset+limit], clamped to the slice.
func pageRows(rows []any, offset, limit int) []any {
	if offset >= len(rows) {
		return []any{}
	}
	end := min(offset+limit, len(rows))
	return rows[offset:end]
}

// idPath formats an integer path segment.
func idPath(format string, ids ...int64) string {
	parts := make([]any, len(ids))
	for i, id := range ids {
		parts[i] = id
	}
	return fmt.Sprintf(format, parts...)
}
