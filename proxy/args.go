package proxy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Paging bounds shared by every list tool (contract: small pages by default).
const (
	listDefaultLimit = 25
	listMaxLimit     = 100
)

// Argument values arrive as decoded JSON, so a number may be float64, json.Number or (from Go
// callers and tests) an int. The helpers below accept all of them.

// present reports whether args carries a usable value for key: the reference treats a missing
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

func requiredError(key string) *ToolError {
	return InvalidArgument(fmt.Sprintf("'%s' is required.", key))
}

func wholeNumberError(key string) *ToolError {
	return InvalidArgument(fmt.Sprintf("'%s' must be a whole number.", key))
}

// lenientInt converts v the way Python's int() does for the reference's limit and offset:
// integers, numeric strings ("12", " 12 "), floats (truncated) and booleans (0/1).
func lenientInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return numberInt(v, true)
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

// intArg returns an identifier argument. Unlike limit, an identifier is not coerced from a
// boolean or truncated from a fraction: run_routine(true) meaning "routine 1" is a trap, not
// leniency. Numeric strings are accepted, as in the reference.
func intArg(args map[string]any, key string) (int64, *ToolError) {
	if !hasArg(args, key) {
		return 0, requiredError(key)
	}
	return parseIntValue(args[key], key)
}

func parseIntValue(v any, key string) (int64, *ToolError) {
	switch x := v.(type) {
	case bool:
		return 0, wholeNumberError(key)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, wholeNumberError(key)
		}
		return n, nil
	}
	n, ok := numberInt(v, false)
	if !ok {
		return 0, wholeNumberError(key)
	}
	return n, nil
}

// optionalIntArg is intArg for an optional key: ok is false when the key is absent.
func optionalIntArg(args map[string]any, key string) (n int64, ok bool, err *ToolError) {
	if !hasArg(args, key) {
		return 0, false, nil
	}
	n, err = parseIntValue(args[key], key)
	return n, err == nil, err
}

// limitArg is the page size: default 25, anything unreadable becomes 25, clamped to 1..100.
func limitArg(args map[string]any) int {
	n, ok := int64(listDefaultLimit), false
	if v, has := args["limit"]; has && v != nil {
		n, ok = lenientInt(v)
		if !ok {
			n = listDefaultLimit
		}
	}
	return int(min(max(n, 1), listMaxLimit))
}

// offsetArg is the page start: default 0; negative or unreadable becomes 0.
func offsetArg(args map[string]any) int {
	v, has := args["offset"]
	if !has || v == nil {
		return 0
	}
	n, ok := lenientInt(v)
	if !ok || n < 0 {
		return 0
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return int(n)
}

// stringArg returns a string argument ("" when absent). A non-string scalar is rendered
// as text so that a harness sending 42 for a name is not refused for a type nit.
func stringArg(args map[string]any, key string) string {
	switch x := args[key].(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// requiredStringArg is stringArg for a required key.
func requiredStringArg(args map[string]any, key string) (string, *ToolError) {
	if !hasArg(args, key) {
		return "", requiredError(key)
	}
	return stringArg(args, key), nil
}

// requiredStringListArg reads a required array-of-strings argument: absent, null or "" is
// the required error. The list is never nil, so an empty one goes to the backend as [].
func requiredStringListArg(args map[string]any, key string) ([]string, *ToolError) {
	if !hasArg(args, key) {
		return nil, requiredError(key)
	}
	l, terr := stringListArg(args, key)
	if terr == nil && l == nil {
		l = []string{}
	}
	return l, terr
}

// stringListArg reads an array-of-strings argument. A single string is taken as a
// one-element list (the reference turned it into a list of its characters).
func stringListArg(args map[string]any, key string) ([]string, *ToolError) {
	switch x := args[key].(type) {
	case nil:
		return nil, nil
	case string:
		if x == "" {
			return nil, nil
		}
		return []string{x}, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, InvalidArgument(fmt.Sprintf("'%s' must be a list of strings.", key))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, InvalidArgument(fmt.Sprintf("'%s' must be a list of strings.", key))
}

// flagArg reads a boolean argument: a JSON boolean, or "true"/"false" in any case (the
// reference's bool("false") was true, which turned a refusal into a yes). ok is false when
// the key is absent or null.
func flagArg(args map[string]any, key string) (val, ok bool, terr *ToolError) {
	v, has := args[key]
	if !has || v == nil {
		return false, false, nil
	}
	if b, good := parseFlag(v); good {
		return b, true, nil
	}
	return false, false, InvalidArgument(fmt.Sprintf("'%s' requires true or false.", key))
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

// asMap returns v as a JSON object, or nil.
func valMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// asList returns v as a JSON array, or nil.
func valList(v any) []any {
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
