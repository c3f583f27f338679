package packaging

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
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
		kv := make([]string, 0, len(e.Env))
		for _, k := range sortedKeys(e.Env) {
			kv = append(kv, tomlKey(k)+" = "+tomlString(e.Env[k]))
		}
		fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
	}
	fmt.Fprintf(&b, "startup_timeout_sec = %d\n", codexStartupTimeoutSec)
	return b.String()
}

// codexApprovalsComment introduces the tool tables when resmongw adds the first of them.
const codexApprovalsComment = "# resmon's tool table: reads run without asking, writes always ask (resmongw tools).\n"

// renderCodexToolTable is one [mcp_servers.<name>.tools.<tool>] table, after a blank line.
func renderCodexToolTable(name, tool, mode string) string {
	return fmt.Sprintf("\n[mcp_servers.%s.tools.%s]\napproval_mode = %s\n", tomlKey(name), tomlKey(tool), tomlString(mode))
}

// renderCodexApprovals is every tool table, as a fresh config gets them.
func renderCodexApprovals(name string, modes [][2]string) string {
	if len(modes) == 0 {
		return ""
	}
	var b strings.Builder
	for i, m := range modes {
		t := renderCodexToolTable(name, m[0], m[1])
		if i == 0 {
			t = "\n" + codexApprovalsComment + t[1:]
		}
		b.WriteString(t)
	}
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

// tomlMerge is the outcome of merging the server table (and its tool tables) into config.toml.
type tomlMerge struct {
	out       []byte         // the whole file; nil when a conflict blocks the write
	existing  string         // a different server table already there, as written ("" if none)
	conflicts []ruleConflict // tool tables whose approval_mode contradicts the tool table
	added     int            // tool approval settings added
	entryNew  bool           // the server table was not there before
}

// codexSpan is the lines of one [mcp_servers.<name>…] table: its header through its last
// key/value line. Blank and comment lines after it are not part of it: they usually
// introduce what follows.
type codexSpan struct {
	path        []string
	first, last int
}

// mergeCodexTOML puts the [mcp_servers.<name>] table for e into src and, unless modes is
// empty, one [mcp_servers.<name>.tools.<tool>] table per tool with its approval_mode. A
// different server table or a contradicting approval_mode is reported and left alone unless
// force. Every other byte of the file stays as it was: comments, blank lines, other tables,
// their order, settings of the tool tables resmongw does not write.
// An entry or approval_mode resmongw wrote for another --writes is updated without force
// (onlyWritesDiffer, codexMigrates).
func mergeCodexTOML(src []byte, name string, e jsonEntry, modes [][2]string, force bool) (tomlMerge, error) {
	doc, err := parseTOMLDoc(src)
	if err != nil {
		return tomlMerge{}, err
	}
	server := []string{"mcp_servers", name}
	if err := checkEditableForms(doc, name, server, modes); err != nil {
		return tomlMerge{}, err
	}
	spans := codexSpans(doc, server)
	current, _ := decodeTOMLPath(src, server)
	table := renderCodexTable(name, e)
	want, _ := decodeTOMLPath([]byte(table), server)

	var res tomlMerge
	ed := newLineEdits(doc)
	entrySame := sameWithoutTools(current, want)
	if !entrySame && current != nil && !onlyWritesDiffer(current, want) {
		res.existing = entrySpansText(doc, spans, server)
	}
	res.conflicts, res.added = planCodexApprovals(ed, doc, spans, name, modes)
	if (res.existing != "" || len(res.conflicts) > 0) && !force {
		return res, nil
	}
	kept := spans
	if !entrySame {
		res.entryNew = res.existing == ""
		kept = placeServerTable(ed, doc, spans, server, table)
	}
	placeToolTables(ed, spans, kept, server)
	res.out = ed.apply()
	if err := checkCodexResult(res.out, server, want, modes); err != nil {
		return tomlMerge{}, err
	}
	return res, nil
}

// planCodexApprovals plans one approval_mode per tool: kept when it already says what the
// tool table says, replaced (applied only with --force) when it contradicts it, added to the
// person's own table for the tool, or added as a new table.
func planCodexApprovals(ed *lineEdits, doc *tomlDoc, spans []codexSpan, name string, modes [][2]string) (conflicts []ruleConflict, added int) {
	server := []string{"mcp_servers", name}
	for _, m := range modes {
		tool, mode := m[0], m[1]
		sp, kv := toolTable(doc, spans, server, tool)
		switch {
		case kv != nil && kv.value == mode && kv.isString:
		case kv != nil && kv.isString && codexMigrates(tool, kv.value):
			ed.replace(kv.first, kv.last+1, "approval_mode = "+tomlString(mode)+"\n")
			added++
		case kv != nil:
			have := strings.TrimSpace(doc.lines[kv.first][strings.Index(doc.lines[kv.first], "=")+1:])
			if kv.isString {
				have = tomlString(kv.value)
			}
			conflicts = append(conflicts, ruleConflict{
				setting: fmt.Sprintf("[mcp_servers.%s.tools.%s] approval_mode = %s", tomlKey(name), tomlKey(tool), have),
				why:     codexConflictWhy(tool, mode),
			})
			ed.replace(kv.first, kv.last+1, "approval_mode = "+tomlString(mode)+"\n")
		case sp != nil: // the person's table for this tool, without an approval_mode yet
			ed.insertAfter(sp.first, "approval_mode = "+tomlString(mode)+"\n")
			added++
		default:
			ed.addToolTable(renderCodexToolTable(name, tool, mode))
			added++
		}
	}
	return conflicts, added
}

// placeToolTables puts the new tool tables after the server's last remaining table (or at the
// end of the file), introduced by a comment when they are the first of their kind.
func placeToolTables(ed *lineEdits, spans, kept []codexSpan, server []string) {
	block := ed.toolTables.String()
	if block == "" {
		return
	}
	if !hasToolTables(spans, server) {
		block = "\n" + codexApprovalsComment + block[1:]
	}
	if last := lastSpanEnd(kept); last >= 0 {
		ed.insertAfter(last, block)
	} else {
		ed.appendText(block)
	}
}

func codexConflictWhy(tool, want string) string { return codexModeWhy(tool, want) }

// checkEditableForms refuses the shapes resmongw does not edit line by line: the server, or
// one of its tool tables, defined as a dotted key or inside an inline table.
func checkEditableForms(doc *tomlDoc, name string, server []string, modes [][2]string) error {
	targets := [][]string{server}
	for _, m := range modes {
		targets = append(targets, append(append([]string(nil), server...), "tools", m[0]))
	}
	var table []string
	for _, x := range doc.exprs {
		if x.header && x.array && (hasPrefix(x.path, server) || hasPrefix(server, x.path)) {
			return fmt.Errorf("line %d makes %s an array of tables, which Codex does not read as a server; change it by hand", x.first+1, strings.Join(x.path, "."))
		}
		if x.header {
			table = x.path
			continue
		}
		for _, t := range targets {
			if hasPrefix(table, t) || !(hasPrefix(x.path, t) || hasPrefix(t, x.path)) {
				continue
			}
			dotted := strings.Join(t, ".")
			return fmt.Errorf("line %d defines %s as a dotted key or inline table, which resmongw does not edit; change it by hand, or turn it into a [%s] table", x.first+1, dotted, quotePath(t))
		}
	}
	return nil
}

func quotePath(p []string) string {
	q := make([]string, len(p))
	for i, k := range p {
		q[i] = tomlKey(k)
	}
	return strings.Join(q, ".")
}

// codexSpans are the [mcp_servers.<name>…] tables of doc, in file order.
func codexSpans(doc *tomlDoc, server []string) []codexSpan {
	var spans []codexSpan
	for i, x := range doc.exprs {
		if !x.header || !hasPrefix(x.path, server) {
			continue
		}
		s := codexSpan{path: x.path, first: x.first, last: x.last}
		for _, y := range doc.exprs[i+1:] {
			if y.header {
				break
			}
			s.last = y.last
		}
		spans = append(spans, s)
	}
	return spans
}

func isToolsPath(p, server []string) bool {
	return len(p) > len(server) && hasPrefix(p, server) && p[len(server)] == "tools"
}

func hasToolTables(spans []codexSpan, server []string) bool {
	for _, s := range spans {
		if len(s.path) == len(server)+2 && isToolsPath(s.path, server) {
			return true
		}
	}
	return false
}

// toolTable finds [mcp_servers.<name>.tools.<tool>] and its approval_mode line, if any.
func toolTable(doc *tomlDoc, spans []codexSpan, server []string, tool string) (*codexSpan, *tomlExpr) {
	path := append(append([]string(nil), server...), "tools", tool)
	for i := range spans {
		if !reflect.DeepEqual(spans[i].path, path) {
			continue
		}
		for j := range doc.exprs {
			x := &doc.exprs[j]
			if !x.header && x.first > spans[i].first && x.last <= spans[i].last && reflect.DeepEqual(x.path, append(path, "approval_mode")) {
				return &spans[i], x
			}
		}
		return &spans[i], nil
	}
	return nil, nil
}

// entrySpansText is the server table and its other subtables (env, …) as written.
func entrySpansText(doc *tomlDoc, spans []codexSpan, server []string) string {
	var parts []string
	for _, s := range spans {
		if !isToolsPath(s.path, server) {
			parts = append(parts, doc.text(s.first, s.last+1))
		}
	}
	return strings.Join(parts, "")
}

// placeServerTable writes table where the server's entry goes: over the first of its old
// tables (the others are dropped), before its first tool table, or at the end of the file.
// It returns the spans that remain.
func placeServerTable(ed *lineEdits, doc *tomlDoc, spans []codexSpan, server []string, table string) (kept []codexSpan) {
	placed := false
	for _, s := range spans {
		switch {
		case isToolsPath(s.path, server):
			kept = append(kept, s)
		case !placed:
			ed.replace(s.first, s.last+1, table)
			kept, placed = append(kept, s), true
		default: // dropped, with the blank lines that set it apart
			from := s.first
			for from > 0 && strings.TrimSpace(doc.lines[from-1]) == "" {
				from--
			}
			ed.replace(from, s.last+1, "")
		}
	}
	switch {
	case placed:
	case len(spans) > 0:
		ed.insertBefore(spans[0].first, table+"\n")
	default:
		ed.appendText(table)
	}
	return kept
}

func lastSpanEnd(spans []codexSpan) int {
	if len(spans) == 0 {
		return -1
	}
	last := spans[0].last
	for _, s := range spans {
		last = max(last, s.last)
	}
	return last
}

// decodeTOMLPath decodes src and returns the table at path (nil when absent or not a table).
func decodeTOMLPath(src []byte, path []string) (map[string]any, error) {
	var v any = map[string]any{}
	if err := toml.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// sameWithoutTools compares two server tables as Codex reads them, leaving out the tool
// tables: an entry laid out differently (env as a subtable, other spacing) is the same entry.
func sameWithoutTools(a, b map[string]any) bool {
	if a == nil || b == nil {
		return false
	}
	strip := func(m map[string]any) map[string]any {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "tools" {
				c[k] = v
			}
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// checkCodexResult re-reads what would be written, with go-toml: never write a file resmongw
// cannot read back, or one that does not say what it meant to write.
func checkCodexResult(out []byte, server []string, want map[string]any, modes [][2]string) error {
	got, err := decodeTOMLPath(out, server)
	if err != nil {
		return fmt.Errorf("internal error: merged file does not parse: %w", err)
	}
	if !sameWithoutTools(got, want) {
		return fmt.Errorf("internal error: merged file does not hold the server entry")
	}
	tools, _ := got["tools"].(map[string]any)
	for _, m := range modes {
		if t, _ := tools[m[0]].(map[string]any); t["approval_mode"] != m[1] {
			return fmt.Errorf("internal error: merged file does not hold approval_mode for %s", m[0])
		}
	}
	return nil
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

// lineEdits collects line-level changes to a tomlDoc and applies them in one pass, so
// positions found by the parser stay valid while edits are planned.
type lineEdits struct {
	doc        *tomlDoc
	before     map[int]string // text inserted before line i
	after      map[int]string // text inserted after line i
	replaced   map[int]lineReplacement
	tail       strings.Builder // appended at the end of the file
	toolTables strings.Builder // new tool tables, placed after the server's last table
}

type lineReplacement struct {
	end  int // exclusive
	text string
}

func newLineEdits(doc *tomlDoc) *lineEdits {
	return &lineEdits{doc: doc, before: map[int]string{}, after: map[int]string{}, replaced: map[int]lineReplacement{}}
}

func (e *lineEdits) insertBefore(line int, text string) { e.before[line] += text }
func (e *lineEdits) insertAfter(line int, text string)  { e.after[line] += text }
func (e *lineEdits) addToolTable(text string)           { e.toolTables.WriteString(text) }
func (e *lineEdits) replace(from, to int, text string) {
	e.replaced[from] = lineReplacement{end: to, text: text}
}

// appendText adds text at the end of the file, after a blank line when the file has content.
func (e *lineEdits) appendText(text string) { e.tail.WriteString(text) }

func (e *lineEdits) apply() []byte {
	var b strings.Builder
	lines := e.doc.lines
	for i := 0; i < len(lines); {
		b.WriteString(e.before[i])
		if r, ok := e.replaced[i]; ok {
			b.WriteString(r.text)
			if r.end > i {
				b.WriteString(e.after[r.end-1])
			}
			i = r.end
			continue
		}
		b.WriteString(lines[i] + "\n")
		b.WriteString(e.after[i])
		i++
	}
	out := b.String()
	if tail := e.tail.String(); tail != "" {
		if strings.TrimSpace(out) != "" && !strings.HasSuffix(out, "\n\n") {
			out += "\n"
		}
		return []byte(out + tail)
	}
	if e.doc.noFinalNewline && strings.HasSuffix(out, "\n") {
		out = out[:len(out)-1] // a file that ended without a newline stays that way
	}
	return []byte(out)
}
