package resmonsim

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Request-body validation as the app's FastAPI/pydantic v2 does it (lax mode, JSON input),
// so a gateway that sends a wrongly typed field gets the app's 422, not a silent default:
//
//   - str takes only a JSON string (a number is not turned into text);
//   - int takes an integer, a float with no fraction, a numeric string or a boolean;
//   - bool takes a boolean, 0/1, or the strings pydantic reads as one ("true", "off", …);
//   - a list takes only a JSON array, a dict only a JSON object;
//   - null passes only an Optional field; a missing field takes its default, or is "missing";
//   - unknown fields are ignored; every field's problems are reported, in field order.

type fieldKind uint8

const (
	kStr     fieldKind = iota // str
	kInt                      // int
	kBool                     // bool
	kDict                     // dict (any object)
	kStrList                  // list[str]
	kIntList                  // list[int]
	kList                     // list of anything the route judges itself (profile names)
	kStrDict                  // dict[str, str]
)

// field is one pydantic model field.
type field struct {
	name     string
	kind     fieldKind
	required bool
	optional bool // Optional[...]: null is allowed (and is then the value)
	def      any  // the default when absent (not required)
	minLen   int  // str: Field(min_length=…); 0 = none
	maxLen   int  // str: Field(max_length=…); 0 = none
}

// model is a pydantic request model: its fields in declaration order.
type model []field

// fields is a validated body: each field's coerced value (or its default).
type fields map[string]any

func (f fields) str(k string) string { s, _ := f[k].(string); return s }
func (f fields) integer(k string) int {
	n, _ := f[k].(int)
	return n
}
func (f fields) flag(k string) bool { b, _ := f[k].(bool); return b }
func (f fields) strs(k string) []string {
	l, _ := f[k].([]string)
	return l
}
func (f fields) ints(k string) []int {
	l, _ := f[k].([]int)
	return l
}
func (f fields) object(k string) obj { o, _ := f[k].(obj); return o }

// validate checks body against m. given lists the fields the body named (for partial
// updates, where "absent" and "null" differ); the error list is FastAPI's 422 detail.
func (m model) validate(body obj) (vals fields, given map[string]bool, errs []obj) {
	vals, given = fields{}, map[string]bool{}
	for _, f := range m {
		v, ok := body.get(f.name)
		loc := []any{"body", f.name}
		switch {
		case !ok && f.required:
			errs = append(errs, verr("missing", loc, "Field required", body))
			continue
		case !ok:
			if f.def != nil {
				vals[f.name] = f.def
			}
			continue
		case v == nil && f.optional:
			vals[f.name], given[f.name] = nil, true
			continue
		}
		got, e := coerce(f, v, loc)
		if len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		vals[f.name], given[f.name] = got, true
	}
	return vals, given, errs
}

// coerce converts one present value the way pydantic's lax mode does, or returns its errors.
func coerce(f field, v any, loc []any) (any, []obj) {
	switch f.kind {
	case kStr:
		s, ok := v.(string)
		if !ok {
			return nil, []obj{verr("string_type", loc, "Input should be a valid string", v)}
		}
		return s, strLength(f, s, loc)
	case kInt:
		n, e := laxInt(v, loc)
		if e != nil {
			return nil, []obj{*e}
		}
		return n, nil
	case kBool:
		b, e := laxBoolValue(v, loc)
		if e != nil {
			return nil, []obj{*e}
		}
		return b, nil
	case kDict, kStrDict:
		o, ok := v.(obj)
		if !ok {
			return nil, []obj{verr("dict_type", loc, "Input should be a valid dictionary", v)}
		}
		if f.kind == kStrDict {
			var errs []obj
			for _, p := range o {
				if _, isStr := p.v.(string); !isStr {
					errs = append(errs, verr("string_type", append(append([]any{}, loc...), p.k), "Input should be a valid string", p.v))
				}
			}
			return o, errs
		}
		return o, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, []obj{verr("list_type", loc, "Input should be a valid list", v)}
	}
	return coerceItems(f.kind, items, loc)
}

func coerceItems(kind fieldKind, items []any, loc []any) (any, []obj) {
	var errs []obj
	at := func(i int) []any { return append(append([]any{}, loc...), i) }
	switch kind {
	case kStrList:
		out := make([]string, 0, len(items))
		for i, x := range items {
			s, ok := x.(string)
			if !ok {
				errs = append(errs, verr("string_type", at(i), "Input should be a valid string", x))
				continue
			}
			out = append(out, s)
		}
		return out, errs
	case kIntList:
		out := make([]int, 0, len(items))
		for i, x := range items {
			n, e := laxInt(x, at(i))
			if e != nil {
				errs = append(errs, *e)
				continue
			}
			out = append(out, n)
		}
		return out, errs
	}
	return items, nil
}

func strLength(f field, s string, loc []any) []obj {
	n := len([]rune(s))
	if f.minLen > 0 && n < f.minLen {
		return []obj{verr("string_too_short", loc, "String should have at least "+characters(f.minLen), s, "min_length", f.minLen)}
	}
	if f.maxLen > 0 && n > f.maxLen {
		return []obj{verr("string_too_long", loc, "String should have at most "+characters(f.maxLen), s, "max_length", f.maxLen)}
	}
	return nil
}

func characters(n int) string {
	return strconv.Itoa(n) + " " + plural(n, "character", "characters")
}

// laxInt is pydantic's lax int for JSON input.
func laxInt(v any, loc []any) (int, *obj) {
	switch x := v.(type) {
	case bool:
		return b01(x), nil
	case int:
		return x, nil
	case json.Number:
		if n, err := strconv.Atoi(x.String()); err == nil {
			return n, nil
		}
		f, err := x.Float64()
		if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int(f), nil
		}
		if err == nil && f != math.Trunc(f) {
			e := verr("int_from_float", loc, "Input should be a valid integer, got a number with a fractional part", v)
			return 0, &e
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n, nil
		}
		e := verr("int_parsing", loc, "Input should be a valid integer, unable to parse string as an integer", v)
		return 0, &e
	}
	e := verr("int_type", loc, "Input should be a valid integer", v)
	return 0, &e
}

// laxBoolValue is pydantic's lax bool for JSON input.
func laxBoolValue(v any, loc []any) (bool, *obj) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "t", "yes", "y", "on":
			return true, nil
		case "0", "false", "f", "no", "n", "off":
			return false, nil
		}
	case json.Number, int:
		if n, ok := asInt(v); ok && (n == 0 || n == 1) {
			return n == 1, nil
		}
	default:
		e := verr("bool_type", loc, "Input should be a valid boolean", v)
		return false, &e
	}
	e := verr("bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", v)
	return false, &e
}

// validBody decodes the required JSON object body and validates it against m, returning
// FastAPI's 422 for either failure.
func (c *call) validBody(m model) (fields, map[string]bool, *reply) {
	body, rep := c.jsonBody()
	if rep != nil {
		return nil, nil, rep
	}
	vals, given, errs := m.validate(body)
	if len(errs) > 0 {
		return nil, nil, validation(errs...)
	}
	return vals, given, nil
}

// The request models of the routes the gateway calls (backend-http-api.md §6; openapi.json).
var (
	explorerSearchBody = model{
		{name: "query", kind: kStr, optional: true},
		{name: "sources", kind: kStrList, def: []string{}},
		{name: "authors", kind: kStrList, def: []string{}},
		{name: "categories", kind: kStrList, def: []string{}},
		{name: "date_from", kind: kStr, optional: true},
		{name: "date_to", kind: kStr, optional: true},
		{name: "cursor", kind: kStr, optional: true},
		{name: "limit", kind: kInt, def: 50},
		{name: "sort", kind: kStr, def: "newest"},
	}
	sweepFields = model{
		{name: "query", kind: kStr, required: true},
		{name: "keywords", kind: kStrList, optional: true},
		{name: "date_from", kind: kStr, optional: true},
		{name: "date_to", kind: kStr, optional: true},
		{name: "max_results", kind: kInt, def: 100},
		{name: "ai_enabled", kind: kBool, def: false},
		{name: "ai_settings", kind: kDict, optional: true},
		{name: "ephemeral_credentials", kind: kStrDict, optional: true},
		{name: "saved_configuration_id", kind: kInt, optional: true},
		{name: "request_id", kind: kStr, optional: true},
	}
	sweepRequest = append(model{{name: "repositories", kind: kStrList, required: true}}, sweepFields...)
	diveRequest  = append(model{{name: "repository", kind: kStr, required: true}}, sweepFields...)

	routineBodyFields = model{
		{name: "name", kind: kStr},
		{name: "schedule_cron", kind: kStr},
		{name: "parameters", kind: kDict},
		{name: "intent", kind: kStr, optional: true},
		{name: "is_active", kind: kBool},
		{name: "email_enabled", kind: kBool},
		{name: "email_ai_summary_enabled", kind: kBool},
		{name: "ai_enabled", kind: kBool},
		{name: "notify_on_complete", kind: kBool},
		{name: "ai_settings", kind: kDict, optional: true},
		{name: "storage_settings", kind: kDict, optional: true},
	}

	watchProfileBody = model{
		{name: "kind", kind: kStr, def: "person"},
		{name: "display_name", kind: kStr, def: ""},
		{name: "names", kind: kList, def: []any{}},
		{name: "identifiers", kind: kDict, def: obj{}},
		{name: "affiliations", kind: kStrList, def: []string{}},
		{name: "field_hints", kind: kStrList, def: []string{}},
		{name: "notes", kind: kStr, optional: true},
	}

	exportReferencesBody = model{
		{name: "document_ids", kind: kIntList, def: []int{}},
		{name: "execution_ids", kind: kIntList, optional: true},
		{name: "format", kind: kStr, def: "bibtex"},
	}

	settingsBodyModel = model{{name: "settings", kind: kDict, required: true}}

	muteBodyModel = model{
		{name: "finding_key", kind: kStr, required: true, minLen: 1, maxLen: 200},
		{name: "note", kind: kStr, optional: true, maxLen: 500},
	}

	restartBody = model{{name: "request_id", kind: kStr, optional: true}}

	executionSettingsBody = model{
		{name: "max_concurrent_executions", kind: kInt, required: true},
		{name: "routine_fire_queue_limit", kind: kInt, required: true},
	}
)

// routineCreate is RoutineCreate: name, schedule_cron and parameters required; the flags
// default (is_active true, the others false). RoutineUpdate is the same fields, all optional.
func routineCreate() model {
	m := make(model, len(routineBodyFields))
	copy(m, routineBodyFields)
	for i := range m {
		switch m[i].name {
		case "name", "schedule_cron", "parameters":
			m[i].required = true
		case "is_active":
			m[i].def = true
		default:
			if m[i].kind == kBool {
				m[i].def = false
			}
		}
	}
	return m
}

func routineUpdate() model {
	m := make(model, len(routineBodyFields))
	copy(m, routineBodyFields)
	for i := range m {
		m[i].optional = true
	}
	return m
}
