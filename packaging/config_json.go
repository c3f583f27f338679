package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonEntry is one server entry in the mcpServers object Claude Code (.mcp.json), Cursor
// and Claude Desktop share. Field order is the order written.
type jsonEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// marshalPretty renders v as indented JSON whose continuation lines start with prefix,
// without HTML escaping (paths may hold '&').
func marshalPretty(v any, prefix, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	_ = enc.Encode(v) // only strings and string slices/maps: cannot fail
	return bytes.TrimRight(b.Bytes(), "\n")
}

// jsonMerge is the outcome of merging one entry into a JSON(C) config.
type jsonMerge struct {
	out      []byte // the whole file with the entry in place
	same     bool   // an identical entry is already there: write nothing
	existing string // the differing entry already there, as written ("" if none)
}

// mergeJSON puts entry at /<objKey>/<name> in src, a JSON or JSONC document (nil or
// blank = a new file). It edits through hujson so every other byte — comments, trailing
// commas, the user's indentation, key order — stays as it was; only the entry's own
// lines are new.
func mergeJSON(src []byte, objKey, name string, entry jsonEntry) (jsonMerge, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		body := marshalPretty(map[string]any{objKey: map[string]jsonEntry{name: entry}}, "", "  ")
		return jsonMerge{out: append(body, '\n')}, nil
	}
	root, err := hujson.Parse(src)
	if err != nil {
		return jsonMerge{}, fmt.Errorf("not valid JSON (or JSONC): %w", err)
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return jsonMerge{}, fmt.Errorf("the top level is not a JSON object")
	}
	objPtr := "/" + jsonPointerEscape(objKey)
	memberPtr := objPtr + "/" + jsonPointerEscape(name)
	want, _ := json.Marshal(entry)

	var res jsonMerge
	if cur := root.Find(memberPtr); cur != nil {
		curText := cur.Clone()
		curText.BeforeExtra, curText.AfterExtra = nil, nil
		if sameJSON(curText.Pack(), want) {
			return jsonMerge{out: src, same: true}, nil
		}
		if !entryForOtherWrites(curText.Pack(), want) { // resmongw's own entry for another --writes: updated
			res.existing = string(curText.Pack())
		}
		if err := root.Patch(patchOp("replace", memberPtr, want)); err != nil {
			return jsonMerge{}, err
		}
	} else {
		obj := root.Find(objPtr)
		if obj == nil {
			// No mcpServers yet: add it, holding just our entry, laid out as a whole.
			wrapped := map[string]jsonEntry{name: entry}
			body, _ := json.Marshal(wrapped)
			if err := root.Patch(patchOp("add", objPtr, body)); err != nil {
				return jsonMerge{}, err
			}
			indentMember(&root, "", objKey, wrapped)
			return finishJSON(root, res)
		}
		if _, ok := obj.Value.(*hujson.Object); !ok {
			return jsonMerge{}, fmt.Errorf("%q is not a JSON object", objKey)
		}
		if err := root.Patch(patchOp("add", memberPtr, want)); err != nil {
			return jsonMerge{}, err
		}
	}
	indentMember(&root, objPtr, name, entry)
	return finishJSON(root, res)
}

func finishJSON(root hujson.Value, res jsonMerge) (jsonMerge, error) {
	res.out = root.Pack()
	if _, err := hujson.Parse(res.out); err != nil { // never write what we cannot read back
		return jsonMerge{}, fmt.Errorf("internal error: merged file does not parse: %w", err)
	}
	return res, nil
}

// indentMember lays out the member name of the object at objPtr over its own lines,
// indented like its siblings (or one step deeper than the object), with value either
// entry pretty-printed.
func indentMember(root *hujson.Value, objPtr, name string, entry any) {
	root.UpdateOffsets()
	packed := root.Pack()
	objVal := root
	if objPtr != "" {
		objVal = root.Find(objPtr)
	}
	obj := objVal.Value.(*hujson.Object)
	idx := -1
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			idx = i
		}
	}
	if idx < 0 {
		return
	}
	parentIndent := lineIndent(packed, objVal.StartOffset)
	unit := indentUnit(packed, parentIndent)
	indent := parentIndent + unit
	for i, m := range obj.Members {
		if i == idx {
			continue
		}
		if b := string(m.Name.BeforeExtra); strings.Contains(b, "\n") {
			indent = b[strings.LastIndexByte(b, '\n')+1:]
			break
		}
	}
	m := &obj.Members[idx]
	// What precedes the member's BeforeExtra in the file decides whether it needs its own
	// newline (hujson moves a previous line's trailing comment, newline included, ahead of it).
	start := m.Name.StartOffset - len(m.Name.BeforeExtra)
	before := strings.TrimRight(string(m.Name.BeforeExtra), " \t")
	precededByNewline := strings.HasSuffix(before, "\n") ||
		(before == "" && start > 0 && packed[start-1] == '\n')
	if !precededByNewline {
		before += "\n"
	}
	m.Name.BeforeExtra = hujson.Extra(before + indent)

	if v, err := hujson.Parse(marshalPretty(entry, indent, unit)); err == nil {
		v.BeforeExtra = hujson.Extra(" ")
		v.AfterExtra = m.Value.AfterExtra
		m.Value = v
	}
	if idx == len(obj.Members)-1 && !strings.Contains(string(obj.AfterExtra), "\n") {
		obj.AfterExtra = hujson.Extra("\n" + parentIndent)
	}
}

// lineIndent is the leading whitespace of the line holding offset off.
func lineIndent(b []byte, off int) string {
	if off > len(b) {
		off = len(b)
	}
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	end := start
	for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
		end++
	}
	return string(b[start:end])
}

func sameJSON(have, want []byte) bool {
	std, err := hujson.Standardize(append([]byte(nil), have...))
	if err != nil {
		return false
	}
	var a, b any
	if json.Unmarshal(std, &a) != nil || json.Unmarshal(want, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func patchOp(op, path string, value []byte) []byte {
	p, _ := json.Marshal(path)
	return []byte(`[{"op":"` + op + `","path":` + string(p) + `,"value":` + string(value) + `}]`)
}

func patchRemove(path string) []byte {
	p, _ := json.Marshal(path)
	return []byte(`[{"op":"remove","path":` + string(p) + `}]`)
}

func jsonPointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
