package resmonsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// obj is a JSON object that keeps its keys in construction order, because FastAPI replies
// follow column/construction order and conformance tests compare bytes.
type obj []kv

type kv struct {
	k string
	v any
}

// o builds an obj from alternating keys and values.
func o(pairs ...any) obj {
	m := make(obj, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m = append(m, kv{pairs[i].(string), pairs[i+1]})
	}
	return m
}

func (m obj) get(k string) (any, bool) {
	for _, p := range m {
		if p.k == k {
			return p.v, true
		}
	}
	return nil, false
}

// set replaces k's value in place, or appends it.
func (m obj) set(k string, v any) obj {
	for i, p := range m {
		if p.k == k {
			m[i].v = v
			return m
		}
	}
	return append(m, kv{k, v})
}

func (m obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := marshalCompact(p.k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalCompact(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pyFloat is a REAL column: Python prints 0.0, not 0.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(float64(f), 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}

// round returns f rounded to n decimal places, as Python's round would for display.
func round(f float64, n int) pyFloat {
	p := math.Pow(10, float64(n))
	return pyFloat(math.Round(f*p) / p)
}

// marshalCompact is FastAPI's encoding: compact separators, non-ASCII unescaped, no HTML escaping.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// pyDumps is Python's json.dumps with default arguments (", " and ": " separators,
// ensure_ascii), the form in which resmon stores JSON text columns such as parameters.
func pyDumps(v any) string {
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writePyString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(x.String())
	case float64:
		bs, _ := pyFloat(x).MarshalJSON()
		b.Write(bs)
	case pyFloat:
		bs, _ := x.MarshalJSON()
		b.Write(bs)
	case obj:
		b.WriteByte('{')
		for i, p := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, p.k)
			b.WriteString(": ")
			writePy(b, p.v)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case []string:
		writePy(b, strSlice(x))
	case []int:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = e
		}
		writePy(b, a)
	default:
		bs, _ := marshalCompact(x)
		b.Write(bs)
	}
}

func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16Surrogates(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// pyStr is Python's str() of a decoded JSON value: how the settings routes store values
// (true → "True", null → "None", a list → its repr).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			return `"` + x + `"`
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			if f, err := x.Float64(); err == nil {
				bs, _ := pyFloat(f).MarshalJSON()
				return string(bs)
			}
		}
		return s
	case obj:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = pyRepr(p.k) + ": " + pyRepr(p.v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

// pyTruthy is Python's bool() of a decoded JSON value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case obj:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// decodeOrdered parses JSON keeping object key order (obj) and number literals (json.Number).
// On a syntax error it returns the byte offset of the problem.
func decodeOrdered(data []byte) (any, int, error) {
	if !utf8.Valid(data) {
		return nil, 0, fmt.Errorf("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err == nil {
		if _, err2 := dec.Token(); err2 == nil {
			err = fmt.Errorf("extra data after the JSON value")
		}
	}
	if err != nil {
		off := int(dec.InputOffset())
		if se, ok := err.(*json.SyntaxError); ok {
			off = int(se.Offset)
		}
		return nil, off, err
	}
	return v, 0, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := t.(type) {
	case json.Delim:
		switch d {
		case '{':
			m := obj{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				m = m.set(k, v) // duplicate keys: last wins, as in Python
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return m, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %v", d)
	default:
		return t, nil
	}
}

func strSlice(ss []string) []any {
	a := make([]any, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// ns is a nullable string column: "" is NULL.
func ns(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nz is a nullable integer column: 0 is NULL (ids start at 1).
func nz(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func b01(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
