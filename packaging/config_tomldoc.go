package packaging

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc is a TOML file split into physical lines, with every top-level expression located
// on them by go-toml's own parser. Edits are made line by line on this index, so every byte
// resmongw does not mean to change — comments, blank lines, layout — stays as it was.
type tomlDoc struct {
	lines []string // without their "\n"
	exprs []tomlExpr
	// noFinalNewline is set when the file's last line has no "\n" (kept that way on edits
	// that do not append).
	noFinalNewline bool
}

// tomlExpr is one top-level expression: a [table] / [[array]] header or a key = value line
// (which may span lines: arrays, multi-line strings).
type tomlExpr struct {
	header      bool     // a [table] or [[array of tables]] header
	array       bool     // the header is [[array of tables]]
	path        []string // the header's key path, or the key/value's full path (table + dotted key)
	first, last int      // 0-based indexes into lines
	value       string   // a key/value's decoded value when it is a string
	isString    bool
}

// parseTOMLDoc checks src with go-toml's decoder (syntax, duplicate keys and tables, the
// errors Codex would refuse the file for) and then indexes it with go-toml's position-reporting
// parser.
func parseTOMLDoc(src []byte) (*tomlDoc, error) {
	var whole map[string]any
	if err := toml.Unmarshal(src, &whole); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("not valid TOML at line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	doc := &tomlDoc{}
	text := string(src)
	if text != "" {
		doc.lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		doc.noFinalNewline = !strings.HasSuffix(text, "\n")
	}
	lineStarts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStarts = append(lineStarts, i+1)
		}
	}
	lineOf := func(off int) int { return sort.SearchInts(lineStarts, off+1) - 1 }

	var p unstable.Parser
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys := e.Key()
			table = keyPath(&keys)
			line := lineOf(int(e.Child().Raw.Offset)) // a header never spans lines
			doc.exprs = append(doc.exprs, tomlExpr{header: true, array: e.Kind == unstable.ArrayTable, path: table, first: line, last: line})
		case unstable.KeyValue:
			keys := e.Key()
			x := tomlExpr{
				path:  append(append([]string(nil), table...), keyPath(&keys)...),
				first: lineOf(int(e.Raw.Offset)),
				last:  lineOf(int(e.Raw.Offset+e.Raw.Length) - 1),
			}
			if v := e.Value(); v.Kind == unstable.String {
				x.value, x.isString = string(v.Data), true
			}
			doc.exprs = append(doc.exprs, x)
		}
	}
	if err := p.Error(); err != nil { // the decoder accepted it, so this would be go-toml's bug
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	return doc, nil
}

func keyPath(it *unstable.Iterator) []string {
	var path []string
	for it.Next() {
		path = append(path, string(it.Node().Data))
	}
	return path
}

// text is lines[from:to] joined, each ending in "\n".
func (d *tomlDoc) text(from, to int) string {
	var b strings.Builder
	for _, l := range d.lines[from:to] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
