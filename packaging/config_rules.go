package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/resmongw/resmongw/internal/lazyre"
)

// jsonRuleList is one array of rule strings in a JSON settings file (Claude Code's
// permissions.allow, Cursor's mcpAllowlist, …).
type jsonRuleList struct {
	path []string // object keys from the top, e.g. {"permissions", "allow"}
	want []string // rules resmongw adds when missing, in this order
	// retire are rules resmongw itself wrote for another write policy: removed where found,
	// without --force (they are its own), and never reported as conflicts.
	retire []string
	// conflict says how a rule already in the list contradicts the tool table ("" if it does not).
	conflict func(rule string) string
}

func (l jsonRuleList) pointer() string {
	var b strings.Builder
	for _, k := range l.path {
		b.WriteString("/" + jsonPointerEscape(k))
	}
	return b.String()
}

// jsonRulesMerge is the outcome of merging rule lists into a settings file.
type jsonRulesMerge struct {
	out       []byte // the whole file with the rules in place; nil when conflicts block it
	added     int    // rules added
	removed   int    // conflicting rules removed (--force) and retired ones
	conflicts []ruleConflict
}

// mergeJSONRules adds every missing wanted rule to its list in src, a JSON or JSONC document
// (nil or blank = a new file), keeping every rule the person already has. A rule that
// conflicts is reported; with force it is removed, otherwise nothing is changed. Every other
// byte stays as it was, as in mergeJSON.
func mergeJSONRules(src []byte, lists []jsonRuleList, force bool) (jsonRulesMerge, error) {
	doc := src
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	root, err := hujson.Parse(doc)
	if err != nil {
		return jsonRulesMerge{}, fmt.Errorf("not valid JSON (or JSONC): %w", err)
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return jsonRulesMerge{}, fmt.Errorf("the top level is not a JSON object")
	}
	var res jsonRulesMerge
	plans := make([]rulePlan, len(lists))
	for i, l := range lists {
		if plans[i], err = planRuleList(&root, l); err != nil {
			return jsonRulesMerge{}, err
		}
		res.conflicts = append(res.conflicts, plans[i].conflicts...)
	}
	if len(res.conflicts) > 0 && !force {
		return res, nil
	}
	for i, l := range lists {
		p := plans[i]
		drop := slices.Sorted(slices.Values(append(slices.Clone(p.conflictAt), p.retireAt...)))
		for j := len(drop) - 1; j >= 0; j-- {
			if err := root.Patch(patchRemove(fmt.Sprintf("%s/%d", l.pointer(), drop[j]))); err != nil {
				return jsonRulesMerge{}, err
			}
			res.removed++
		}
		if err := addRules(&root, l, p.missing); err != nil {
			return jsonRulesMerge{}, err
		}
		res.added += len(p.missing)
	}
	if res.added == 0 && res.removed == 0 {
		res.out = src // byte for byte: a second run changes nothing
		return res, nil
	}
	m, err := finishJSON(root, jsonMerge{})
	res.out = m.out
	return res, err
}

// rulePlan is what one list needs: which wanted rules are missing, which present ones conflict.
type rulePlan struct {
	missing    []string
	conflictAt []int // element indexes, ascending
	retireAt   []int // element indexes of retired rules, ascending
	conflicts  []ruleConflict
}

func planRuleList(root *hujson.Value, l jsonRuleList) (rulePlan, error) {
	var p rulePlan
	have := map[string]bool{}
	if v := root.Find(l.pointer()); v != nil {
		arr, ok := v.Value.(*hujson.Array)
		if !ok {
			return p, fmt.Errorf("%s is not a JSON array", strings.Join(l.path, "."))
		}
		for i, el := range arr.Elements {
			lit, ok := el.Value.(hujson.Literal)
			if !ok || lit.Kind() != '"' {
				continue
			}
			rule := lit.String()
			if slices.Contains(l.retire, rule) && !slices.Contains(l.want, rule) {
				p.retireAt = append(p.retireAt, i)
				continue
			}
			have[rule] = true
			if l.conflict == nil {
				continue
			}
			if why := l.conflict(rule); why != "" {
				p.conflictAt = append(p.conflictAt, i)
				p.conflicts = append(p.conflicts, ruleConflict{setting: fmt.Sprintf("%s: %q", strings.Join(l.path, "."), rule), why: why})
			}
		}
	}
	for _, r := range l.want {
		if !have[r] {
			p.missing = append(p.missing, r)
		}
	}
	return p, nil
}

// addRules appends rules to the list at l.path, creating the list and the objects above it
// when missing; new elements are laid out like their siblings.
func addRules(root *hujson.Value, l jsonRuleList, rules []string) error {
	if len(rules) == 0 {
		return nil
	}
	// The deepest object on the path that exists, and what has to be made below it.
	depth := 0
	for depth < len(l.path) {
		v := root.Find(jsonRuleList{path: l.path[:depth+1]}.pointer())
		if v == nil {
			break
		}
		if depth < len(l.path)-1 {
			if _, ok := v.Value.(*hujson.Object); !ok {
				return fmt.Errorf("%s is not a JSON object", strings.Join(l.path[:depth+1], "."))
			}
		}
		depth++
	}
	if depth == len(l.path) {
		return appendArrayStrings(root, l.pointer(), rules)
	}
	// Build the missing part as one value, e.g. {"allow": [...]} under an existing "permissions".
	var value any = rules
	for i := len(l.path) - 1; i > depth; i-- {
		value = map[string]any{l.path[i]: value}
	}
	body, _ := json.Marshal(value)
	parent := jsonRuleList{path: l.path[:depth]}.pointer()
	if err := root.Patch(patchOp("add", parent+"/"+jsonPointerEscape(l.path[depth]), body)); err != nil {
		return err
	}
	indentMember(root, parent, l.path[depth], value)
	return nil
}

// appendArrayStrings appends items to the array at ptr: one per line, indented like the
// other elements (or one step deeper than the line that opens the array), or on the same line
// when the array is written on one line.
func appendArrayStrings(root *hujson.Value, ptr string, items []string) error {
	root.UpdateOffsets()
	packed := root.Pack()
	arrVal := root.Find(ptr)
	arr := arrVal.Value.(*hujson.Array)
	open := lineIndent(packed, arrVal.StartOffset)
	sep := "\n" + open + indentUnit(packed, open)
	multiline := true
	if len(arr.Elements) == 0 && !opensOwnLine(packed, arrVal.StartOffset) {
		sep, multiline = " ", false // an empty [] inside a one-line object stays on that line
	}
	if n := len(arr.Elements); n > 0 {
		b := string(arr.Elements[n-1].BeforeExtra)
		if i := strings.LastIndexByte(b, '\n'); i >= 0 {
			sep = "\n" + b[i+1:]
		} else {
			sep, multiline = " ", false
		}
	}
	first := len(arr.Elements)
	for _, it := range items {
		lit, _ := json.Marshal(it)
		if err := root.Patch(patchOp("add", ptr+"/-", lit)); err != nil {
			return err
		}
	}
	arr = root.Find(ptr).Value.(*hujson.Array)
	for i := first; i < len(arr.Elements); i++ {
		// Patch may have moved the previous element's trailing comment here; it ends its line.
		before := strings.TrimRight(string(arr.Elements[i].BeforeExtra), " \t")
		before = strings.TrimSuffix(before, "\n")
		if i == 0 && !multiline {
			arr.Elements[i].BeforeExtra = hujson.Extra(before) // `["first"`, not `[ "first"`
			continue
		}
		arr.Elements[i].BeforeExtra = hujson.Extra(before + sep)
	}
	if multiline && !strings.Contains(string(arr.AfterExtra), "\n") {
		arr.AfterExtra = hujson.Extra("\n" + open)
	}
	return nil
}

// opensOwnLine reports whether the line holding off starts with the member name whose value
// begins at off (`"allow": [`), rather than with other members of a one-line object.
func opensOwnLine(packed []byte, off int) bool {
	start := bytes.LastIndexByte(packed[:off], '\n') + 1
	return memberOnlyRE().Match(bytes.TrimSpace(packed[start:off]))
}

var memberOnlyRE = lazyre.New(`^"(?:[^"\\]|\\.)*"\s*:$`)

// indentUnit is one indentation step of the file: a tab if it indents with tabs, else two spaces.
func indentUnit(packed []byte, lineIndent string) string {
	if strings.HasPrefix(lineIndent, "\t") || bytes.Contains(packed, []byte("\n\t\"")) {
		return "\t"
	}
	return "  "
}
