package packaging

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// codexStartupTimeoutSec gives the shim room to start the daemon on a cold machine; Codex's
// own default (10 s) is tight when it also has to wait for resmon.
const codexStartupTimeoutSec = 30

// renderCodexTable renders [mcp_servers.<name>] for Codex's config.toml.
func renderCodexTable(name string, e jsonEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(name))
	fmt.Fprintf(&b, "command = %s\n", tomlString(e.Command))
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = tomlString(a)
	}
	fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
	if len(e.Env) > 0 {
		keys := make([]string, 0, len(e.Env))
		for k := range e.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		kv := make([]string, len(keys))
		for i, k := range keys {
			kv[i] = tomlKey(k) + " = " + tomlString(e.Env[k])
		}
		fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
	}
	fmt.Fprintf(&b, "startup_timeout_sec = %d\n", codexStartupTimeoutSec)
	return b.String()
}

func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// tomlString is a TOML basic string: TOML has no \x escapes, so control characters
// become \uXXXX; everything else (UTF-8 included) is literal.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlLine is one physical line of a TOML file, classified by a small lexer that knows
// strings (all four kinds), comments and bracket nesting — enough to find table headers
// reliably without re-serialising anything.
type tomlLine struct {
	text     string
	header   []string // key path of a [table] or [[array]] header; nil otherwise
	keyPath  []string // dotted key of a key = value line starting here, within its table
	content  bool     // holds TOML content (not blank, not only a comment)
	topLevel bool     // starts outside any string or open bracket
}

type tomlMerge struct {
	out      []byte
	same     bool
	existing string
}

// mergeCodexTOML replaces (or appends) the [mcp_servers.<name>] table and its subtables
// in src with table. Every other byte of the file stays as it was: comments, blank lines,
// other tables, their order. Trailing blank and comment lines of a replaced table are kept,
// because they usually introduce the next table.
func mergeCodexTOML(src []byte, name, table string) (tomlMerge, error) {
	lines, err := lexTOML(string(src))
	if err != nil {
		return tomlMerge{}, err
	}
	prefix := []string{"mcp_servers", name}
	type span struct{ start, end int } // [start, end) lines
	var spans []span
	current := []string(nil)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.header != nil {
			current = l.header
			if hasPrefix(l.header, prefix) {
				end := i + 1
				for j := i + 1; j < len(lines) && lines[j].header == nil; j++ {
					if lines[j].content {
						end = j + 1
					}
				}
				spans = append(spans, span{i, end})
			}
			continue
		}
		if l.keyPath != nil && !hasPrefix(current, prefix) {
			full := append(append([]string(nil), current...), l.keyPath...)
			if hasPrefix(full, prefix) || hasPrefix(prefix, full) {
				return tomlMerge{}, fmt.Errorf("line %d defines mcp_servers.%s as a dotted key or inline table, which this tool does not edit; change it by hand, or turn it into a [mcp_servers.%s] table", i+1, name, name)
			}
		}
	}
	if len(spans) > 0 {
		var old []string
		for _, s := range spans {
			for _, l := range lines[s.start:s.end] {
				old = append(old, l.text)
			}
		}
		existing := strings.Join(old, "\n") + "\n"
		if normalizeTOML(existing) == normalizeTOML(table) {
			return tomlMerge{out: src, same: true}, nil
		}
		var b strings.Builder
		next := 0
		for k, s := range spans {
			for _, l := range lines[next:s.start] {
				b.WriteString(l.text + "\n")
			}
			if k == 0 {
				b.WriteString(table)
			}
			next = s.end
		}
		for _, l := range lines[next:] {
			b.WriteString(l.text + "\n")
		}
		out := b.String()
		if !strings.HasSuffix(string(src), "\n") && len(src) > 0 && next < len(lines) {
			out = strings.TrimSuffix(out, "\n") // keep a file that ended without a newline that way
		}
		return tomlMerge{out: []byte(out), existing: existing}, nil
	}
	out := string(src)
	if len(strings.TrimSpace(out)) > 0 {
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if !strings.HasSuffix(out, "\n\n") {
			out += "\n"
		}
	}
	return tomlMerge{out: []byte(out + table)}, nil
}

// normalizeTOML drops blank and comment-only lines and surrounding spaces, so a table
// that differs only in layout still counts as identical.
func normalizeTOML(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func hasPrefix(path, prefix []string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// lexTOML splits src into lines and classifies each one.
func lexTOML(src string) ([]tomlLine, error) {
	raw := strings.Split(src, "\n")
	if strings.HasSuffix(src, "\n") {
		raw = raw[:len(raw)-1]
	}
	var (
		lines []tomlLine
		ml    string // open multi-line string delimiter, `"""` or `'''`
		depth int    // open [ and { inside values
	)
	for n, text := range raw {
		l := tomlLine{text: text, topLevel: ml == "" && depth == 0}
		trimmed := strings.TrimSpace(text)
		if l.topLevel && strings.HasPrefix(trimmed, "[") {
			path, err := parseHeader(trimmed)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			l.header, l.content = path, true
			lines = append(lines, l)
			continue
		}
		if l.topLevel && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			if k, _, ok := strings.Cut(trimmed, "="); ok {
				l.keyPath = splitDotted(strings.TrimSpace(k))
			}
		}
		// Walk the line for strings, comments and brackets.
		for i := 0; i < len(text); i++ {
			c := text[i]
			if ml != "" {
				if strings.HasPrefix(text[i:], ml) {
					i += 2
					ml = ""
				} else if c == '\\' && ml == `"""` {
					i++
				}
				l.content = true
				continue
			}
			switch {
			case c == '#':
				i = len(text)
			case strings.HasPrefix(text[i:], `"""`) || strings.HasPrefix(text[i:], `'''`):
				ml = text[i : i+3]
				i += 2
				l.content = true
			case c == '"' || c == '\'':
				j := i + 1
				for j < len(text) && text[j] != c {
					if c == '"' && text[j] == '\\' {
						j++
					}
					j++
				}
				i = j
				l.content = true
			case c == '[' || c == '{':
				depth++
				l.content = true
			case c == ']' || c == '}':
				depth--
				l.content = true
			case c != ' ' && c != '\t' && c != '\r':
				l.content = true
			}
		}
		if !l.topLevel && (ml != "" || depth > 0) {
			l.content = true // inside a value that spans lines
		}
		lines = append(lines, l)
	}
	if ml != "" || depth != 0 {
		return nil, fmt.Errorf("unterminated string or bracket at end of file")
	}
	return lines, nil
}

// parseHeader returns the key path of "[a.b]" / "[[a.b]]" (comments allowed after).
func parseHeader(line string) ([]string, error) {
	inner := strings.TrimPrefix(line, "[")
	array := strings.HasPrefix(inner, "[")
	inner = strings.TrimPrefix(inner, "[")
	closer := "]"
	if array {
		closer = "]]"
	}
	// Find the closing bracket outside quotes.
	end := -1
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '"', '\'':
			q := inner[i]
			for i++; i < len(inner) && inner[i] != q; i++ {
				if q == '"' && inner[i] == '\\' {
					i++
				}
			}
		case ']':
			if strings.HasPrefix(inner[i:], closer) {
				end = i
			}
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("malformed table header %q", line)
	}
	return splitDotted(strings.TrimSpace(inner[:end])), nil
}

// splitDotted splits a dotted TOML key into its unquoted parts.
func splitDotted(k string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(k) && k[j] != c {
				if c == '"' && k[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(k) {
				j = len(k)
			}
			seg := k[i:min(j+1, len(k))]
			if c == '"' {
				if u, err := strconv.Unquote(seg); err == nil {
					seg = u
				} else {
					seg = strings.Trim(seg, `"`)
				}
			} else {
				seg = strings.Trim(seg, "'")
			}
			cur.WriteString(seg)
			i = j
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case c == ' ' || c == '\t':
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}
