package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/backend"
)

// Argument checking against a tool's own input schema. The schema a harness reads in
// tools/list is the one source of the rules: the declared JSON type, enum values,
// minimum/maximum, array items and nested object properties. A row of the table cannot drift
// from its check, because there is no second copy of the rule to drift.
//
// Values are never coerced. A string where a list is declared, an array where a string is
// declared or "true" where a boolean is declared is refused, naming the argument and the type
// it must have, before any request is built: coercing it would send the backend an empty
// query, drop a filter, or create a record the person did not ask for.
//
// Absent and null arguments are not checked here; whether a tool needs one is the handler's
// decision (the reference's rule: missing, null and "" all count as absent for a required
// argument).

// enumSentences keeps the reference server's own sentence for a value outside an enum, where it
// has one. The allowed values in the sentence still come from the schema.
var enumSentences = map[string]func(got string, allowed []string) string{
	"search_corpus.mode": func(got string, allowed []string) string {
		return fmt.Sprintf("Unknown mode %s. Use %s.", pyRepr(got), quoteOr(allowed))
	},
	"get_analytics.view": func(got string, allowed []string) string {
		return fmt.Sprintf("Unknown view %s. Expected one of: %s.", pyRepr(got), strings.Join(allowed, ", "))
	},
	"update_settings.group": func(got string, allowed []string) string {
		if got == "execution" {
			return executionGroupRefusal
		}
		return fmt.Sprintf("%s is not a settings group this tool can change. Allowed: %s.", pyRepr(got), strings.Join(allowed, ", "))
	},
}

// CheckArguments checks every present, non-null argument of a call to tool against the tool's
// input schema. Properties are checked in name order, so the first refusal is the same every
// time. An argument the schema does not declare is refused, naming the nearest one it does
// (a deliberate difference: the reference ignores it, so a misspelt optional argument, such
// as run_sweep's expected_runtime for expected_runtime_id, silently ran the call without it).
func CheckArguments(tool string, schema map[string]any, args map[string]any) *backend.ToolError {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]string)
	if terr := checkUnknown(tool, "", props, args); terr != nil {
		return terr
	}
	for _, name := range sortedKeys(props) {
		v, ok := args[name]
		if !ok || v == nil || v == "" && slices.Contains(required, name) {
			continue // absent: the handler's required check speaks for it
		}
		prop, _ := props[name].(map[string]any)
		if terr := checkValue(tool+"."+name, name, prop, v); terr != nil {
			return terr
		}
	}
	return nil
}

// checkValue checks one value against one property schema. key is "tool.property" (for the
// reference's own sentences); path names the value for a person ("sources[2]", "entity.mode").
func checkValue(key, path string, prop map[string]any, v any) *backend.ToolError {
	typ, _ := prop["type"].(string)
	got := jsonKind(v)
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return typeError(path, prop, got)
		}
		return checkEnum(key, path, prop, s)
	case "integer":
		if got != "number" {
			return typeError(path, prop, got)
		}
		n, terr := wholeNumber(path, v)
		if terr != nil {
			return terr
		}
		return checkRange(path, prop, n)
	case "boolean":
		if got != "boolean" {
			return typeError(path, prop, got)
		}
	case "array":
		items, ok := arrayItems(v)
		if !ok {
			return typeError(path, prop, got)
		}
		return checkItems(key, path, prop, items)
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return typeError(path, prop, got)
		}
		return checkProperties(key, path, prop, m)
	}
	return nil
}

// checkItems checks each element of an array against the schema's items.
func checkItems(key, path string, prop map[string]any, items []any) *backend.ToolError {
	itemSchema, _ := prop["items"].(map[string]any)
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", path, i)
		if item == nil && itemSchema != nil {
			return typeError(at, itemSchema, "null") // a list of ids holds no null
		}
		if terr := checkValue(key+"[]", at, itemSchema, item); terr != nil {
			return terr
		}
	}
	return nil
}

// checkProperties checks the declared properties of an object argument (entity).
func checkProperties(key, path string, prop map[string]any, m map[string]any) *backend.ToolError {
	inner, _ := prop["properties"].(map[string]any)
	if inner != nil {
		if terr := checkUnknown(key, path+".", inner, m); terr != nil {
			return terr
		}
	}
	for _, name := range sortedKeys(inner) {
		iv, ok := m[name]
		if !ok || iv == nil {
			continue
		}
		ip, _ := inner[name].(map[string]any)
		if terr := checkValue(key+"."+name, path+"."+name, ip, iv); terr != nil {
			return terr
		}
	}
	return nil
}

// typeError names the argument, the type its schema declares and the type that came.
func typeError(path string, prop map[string]any, got string) *backend.ToolError {
	want := typeText(prop)
	return backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("'%s' must be %s, not %s.", path, want, article(got)),
		map[string]any{"argument": path, "expected": schemaType(prop), "received": got})
}

// wholeNumber reads an integer argument. A fraction is refused (an id of 1.5 is nobody's id),
// and so is a number beyond what resmon can store, saying so rather than calling 1e20 "not a
// whole number".
func wholeNumber(path string, v any) (int64, *backend.ToolError) {
	if n, ok := numberInt(v, false); ok {
		return n, nil
	}
	detail := map[string]any{"argument": path, "expected": "integer", "received": "number"}
	if f := floatOf(v); math.IsInf(f, 0) || f == math.Trunc(f) {
		return 0, backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("'%s' is outside what resmon can store: it takes whole numbers from %d to %d.",
			path, int64(math.MinInt64), int64(math.MaxInt64)), detail)
	}
	return 0, backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("'%s' must be a whole number, not %s.", path, numberText(v)), detail)
}

// floatOf reads any number form as float64; a JSON number too large for float64 is ±Inf.
func floatOf(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64() // ±Inf with a range error
		return f
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	}
	f, _ := valFloat(v)
	return f
}

func checkRange(path string, prop map[string]any, n int64) *backend.ToolError {
	if lo, ok := schemaInt(prop["minimum"]); ok && n < lo {
		return backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("'%s' must be at least %d (got %d).", path, lo, n),
			map[string]any{"argument": path, "minimum": lo})
	}
	if hi, ok := schemaInt(prop["maximum"]); ok && n > hi {
		return backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("'%s' must be at most %d (got %d).", path, hi, n),
			map[string]any{"argument": path, "maximum": hi})
	}
	return nil
}

func checkEnum(key, path string, prop map[string]any, s string) *backend.ToolError {
	allowed := schemaStrings(prop["enum"])
	if allowed == nil {
		return nil
	}
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	msg := fmt.Sprintf("Unknown %s %s. Use one of: %s.", path, pyRepr(s), strings.Join(allowed, ", "))
	if sentence, ok := enumSentences[key]; ok {
		msg = sentence(s, allowed)
	}
	return backend.NewError(backend.CodeInvalidArgument, msg, map[string]any{"argument": path, "allowed": allowed})
}

// jsonKind names the JSON type of a decoded value (or of the Go value a direct caller passed).
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int32, int64, uint, uint64:
		return "number"
	case map[string]any:
		return "object"
	}
	if _, ok := arrayItems(v); ok {
		return "array"
	}
	return "value of another kind"
}

// arrayItems returns v's elements when it is a JSON array ([]any from decoding; typed slices
// from Go callers).
func arrayItems(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		return anySlice(x), true
	case []int:
		return anySlice(x), true
	case []int64:
		return anySlice(x), true
	}
	return nil, false
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// schemaType is the declared type in the schema's own words ("array of strings" for items).
func schemaType(prop map[string]any) string {
	typ, _ := prop["type"].(string)
	if typ == "array" {
		if items, ok := prop["items"].(map[string]any); ok {
			if it, _ := items["type"].(string); it != "" {
				return "array of " + it + "s"
			}
		}
	}
	return typ
}

// typeText is schemaType for a sentence: "an integer (a whole number)", "a boolean (true or false)".
func typeText(prop map[string]any) string {
	switch t := schemaType(prop); t {
	case "integer":
		return "an integer (a whole number)"
	case "boolean":
		return "a boolean (true or false)"
	case "":
		return "a JSON value"
	default:
		return article(t)
	}
}

func article(noun string) string {
	if noun == "" {
		return noun
	}
	switch noun[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + noun
	}
	if noun == "null" {
		return noun
	}
	return "a " + noun
}

func numberText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	return fmt.Sprint(v)
}

func schemaInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		return int64(x), x == math.Trunc(x)
	}
	return 0, false
}

func schemaStrings(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// quoteOr writes ['keyword', 'semantic'] as "'keyword' or 'semantic'", the reference's form.
func quoteOr(values []string) string {
	q := make([]string, len(values))
	for i, s := range values {
		q[i] = pyRepr(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// readWithoutSchema are arguments a handler reads though its schema does not declare them,
// so that its own sentence answers: search_corpus refuses a true offset with how to page.
var readWithoutSchema = map[string]bool{"search_corpus.offset": true}

// checkUnknown refuses the first argument (in name order) that props does not declare,
// naming the nearest declared one and every one there is; nothing has been sent. prefix is
// "" at the top level, "entity." inside an object argument.
func checkUnknown(key, prefix string, props map[string]any, args map[string]any) *backend.ToolError {
	for _, name := range sortedKeys(args) {
		if _, ok := props[name]; ok || readWithoutSchema[key+"."+name] {
			continue
		}
		known := sortedKeys(props)
		msg := fmt.Sprintf("Unknown argument '%s%s'.", prefix, name)
		detail := map[string]any{"argument": prefix + name, "known": known}
		if near := nearest(name, known); near != "" {
			msg = fmt.Sprintf("Unknown argument '%s%s'; did you mean '%s%s'?", prefix, name, prefix, near)
			detail["did_you_mean"] = prefix + near
		}
		if len(known) == 0 {
			msg += " It takes no arguments."
		} else {
			msg += " Known: " + strings.Join(known, ", ") + "."
		}
		return backend.NewError(backend.CodeInvalidArgument, msg+" Nothing was sent.", detail)
	}
	return nil
}

// nearest is the known name closest to name: one that starts with it or it starts with
// (expected_runtime → expected_runtime_id), else the fewest edits when they are few for its
// length; "" when none is close.
func nearest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if strings.HasPrefix(k, name) || strings.HasPrefix(name, k) {
			d = min(d, 1)
		}
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 || bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: argument names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
