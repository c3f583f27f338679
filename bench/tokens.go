package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"

	"github.com/resmongw/resmongw/resmonsim"
	"github.com/resmongw/resmongw/toolfacts"
	"github.com/resmongw/resmongw/tools"
)

// BudgetBytes is the size above which a tool's default answer needs a reason (issue 7).
const BudgetBytes = 8 << 10

// ToolSize is the size of one tool's default answer: the text a model reads.
type ToolSize struct {
	Tool  string
	Args  string // the arguments used, as compact JSON
	Bytes int
	Err   string // a tool error's text, when the call failed (its size is still counted)
}

// MeasureToolSizes calls every tool once with its default arguments (only the required ones,
// filled from the seeded corpus) on a fresh simulator in dir, reads before writes, and one row
// per analytics view. The first row is tools/list itself, which every session pays once.
func MeasureToolSizes(ctx context.Context, dir string) ([]ToolSize, error) {
	sim, err := resmonsim.Start(resmonsim.Options{StateDir: filepath.Join(dir, "sizes-resmon")})
	if err != nil {
		return nil, err
	}
	defer sim.Stop()
	s, err := InProcSession(ctx, sim.StateDir())
	if err != nil {
		return nil, err
	}
	defer s.Close()

	var out []ToolSize
	list, err := s.CS.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	lb, _ := json.Marshal(list)
	out = append(out, ToolSize{Tool: "tools/list (all definitions)", Args: "", Bytes: len(lb)})

	ids, err := corpusIDs(ctx, s)
	if err != nil {
		return nil, err
	}
	call := func(name string, args map[string]any) {
		text, err := CallTool(ctx, s.CS, name, args)
		ab, _ := json.Marshal(args)
		row := ToolSize{Tool: name, Args: string(ab), Bytes: len(text)}
		if err != nil {
			row.Err = fmt.Sprintf("%.160s", err.Error())
		}
		out = append(out, row)
	}
	for _, t := range tools.Tools {
		if t.RequiresConfirmation {
			continue
		}
		if t.Name == "get_analytics" {
			for _, v := range enumOf(t, "view") {
				call(t.Name, map[string]any{"view": v})
			}
			continue
		}
		call(t.Name, ids.argsFor(t.Name))
	}
	for _, t := range tools.Tools {
		if t.RequiresConfirmation {
			call(t.Name, ids.argsFor(t.Name))
		}
	}
	return out, nil
}

// ids are real ids of the seeded corpus, found through the tools themselves.
type ids struct {
	exec, doc, routine, profile int
	query                       string
	sources                     []string
}

func (c ids) argsFor(tool string) map[string]any {
	row, _ := toolfacts.ByName(tool)
	args := maps.Clone(row.Example) // the row's example, with this corpus's real ids and words
	for k := range args {
		switch k {
		case "doc_id":
			args[k] = c.doc
		case "routine_id":
			args[k] = c.routine
		case "exec_id":
			args[k] = c.exec
		case "profile_id":
			args[k] = c.profile
		case "query":
			args[k] = c.query
		case "keywords":
			args[k] = []string{c.query}
		case "sources":
			args[k] = c.sources
		}
	}
	return args
}

// corpusIDs picks the completed execution with the most results (the largest default answers
// for the execution tools), its first paper, the first routine that is not running, the first
// watch profile, a word of that paper's title and two sources that need no key.
func corpusIDs(ctx context.Context, s *Session) (ids, error) {
	var c ids
	get := func(tool string, args map[string]any, key string) ([]map[string]any, error) {
		text, err := CallTool(ctx, s.CS, tool, args)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		raw, _ := m[key].([]any)
		rows := make([]map[string]any, 0, len(raw))
		for _, r := range raw {
			if o, ok := r.(map[string]any); ok {
				rows = append(rows, o)
			}
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("%s: no %q in the seeded corpus", tool, key)
		}
		return rows, nil
	}
	num := func(o map[string]any, k string) int { f, _ := o[k].(float64); return int(f) }

	execs, err := get("list_executions", nil, "executions")
	if err != nil {
		return c, err
	}
	best := -1
	for _, e := range execs {
		if e["status"] == "completed" && num(e, "result_count") > best {
			best, c.exec = num(e, "result_count"), num(e, "id")
		}
	}
	papers, err := get("get_execution_results", map[string]any{"exec_id": c.exec}, "papers")
	if err != nil {
		return c, err
	}
	c.doc = num(papers[0], "id")
	title, _ := papers[0]["title"].(string)
	if f := strings.Fields(title); len(f) > 0 {
		c.query = strings.ToLower(f[0])
	}
	routines, err := get("list_routines", nil, "routines")
	if err != nil {
		return c, err
	}
	for _, r := range routines {
		if r["last_status"] != "running" {
			c.routine = num(r, "id")
			break
		}
	}
	profiles, err := get("list_watch_profiles", nil, "profiles")
	if err != nil {
		return c, err
	}
	c.profile = num(profiles[0], "id")
	sources, err := get("list_sources", nil, "sources")
	if err != nil {
		return c, err
	}
	for _, src := range sources {
		if src["key_required"] == false && len(c.sources) < 2 {
			c.sources = append(c.sources, src["slug"].(string))
		}
	}
	if c.exec == 0 || c.doc == 0 || c.routine == 0 || c.query == "" || len(c.sources) == 0 {
		return c, fmt.Errorf("could not find ids in the seeded corpus: %+v", c)
	}
	return c, nil
}

// enumOf returns a tool's enum values for prop, sorted.
func enumOf(t tools.Tool, prop string) []string {
	props, _ := t.InputSchema["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	var out []string
	switch e := p["enum"].(type) {
	case []string:
		out = append(out, e...)
	case []any:
		for _, v := range e {
			out = append(out, fmt.Sprint(v))
		}
	}
	sort.Strings(out)
	return out
}
