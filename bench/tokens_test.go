package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/tools"
)

// The size table must cover every tool with a successful answer; a tool that fails on the
// seeded corpus would report the size of an error message instead of its answer.
func TestToolSizesCoverEveryTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sizes, err := MeasureToolSizes(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) == 0 || !strings.HasPrefix(sizes[0].Tool, "tools/list") || sizes[0].Bytes == 0 {
		t.Fatalf("first row is not a non-empty tools/list: %+v", sizes[:min(1, len(sizes))])
	}
	got := map[string]int{}
	for _, s := range sizes[1:] {
		got[s.Tool]++
		if s.Err != "" {
			t.Errorf("%s %s failed on the seeded corpus: %s", s.Tool, s.Args, s.Err)
		}
		if s.Bytes == 0 {
			t.Errorf("%s %s answered nothing", s.Tool, s.Args)
		}
	}
	for _, tool := range tools.Tools {
		if got[tool.Name] == 0 {
			t.Errorf("no row for %s", tool.Name)
		}
	}
	if views := enumOf(mustTool(t, "get_analytics"), "view"); got["get_analytics"] != len(views) || len(views) == 0 {
		t.Errorf("get_analytics rows = %d, want one per view %v", got["get_analytics"], views)
	}
}

func mustTool(t *testing.T, name string) tools.Tool {
	t.Helper()
	tool, ok := tools.ToolByName(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}
