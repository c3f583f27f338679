package tools

import (
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/resmongw/resmongw/toolfacts"
)

// The table the gateway serves: every row of toolfacts.Rows with exactly one handler, and the
// requests each tool sends marked as writes exactly when the row is a write.

const testCallTimeout = 10 * time.Second

// example is a copy of the tool's example arguments (its row's Example).
func example(name string) map[string]any {
	r, ok := toolfacts.ByName(name)
	if !ok {
		panic("no tool " + name)
	}
	return maps.Clone(r.Example)
}

// A tool is its row and its handler: each row has one, no handler is left without a row, and
// Tools is the rows in their order. The views of get_analytics the schema offers are the ones
// the handler can route.
func TestEveryRowHasExactlyOneHandler(t *testing.T) {
	if len(Tools) != len(toolfacts.Rows) {
		t.Fatalf("%d tools for %d rows", len(Tools), len(toolfacts.Rows))
	}
	for i, r := range toolfacts.Rows {
		if Tools[i].Name != r.Name || Tools[i].Handler == nil {
			t.Errorf("tool %d: %q with handler %v, want row %q with its handler", i, Tools[i].Name, Tools[i].Handler != nil, r.Name)
		}
	}
	for name := range handlers {
		if _, ok := toolfacts.ByName(name); !ok {
			t.Errorf("handler %q has no row", name)
		}
	}
	if got := slices.Sorted(maps.Keys(analyticsPaths)); !slices.Equal(got, toolfacts.AnalyticsViews) {
		t.Errorf("analytics routes for %v, schema offers %v", got, toolfacts.AnalyticsViews)
	}
	if got := slices.Sorted(maps.Keys(analyticsKeys)); !slices.Equal(got, toolfacts.AnalyticsViews) {
		t.Errorf("analytics reply keys for %v, schema offers %v", got, toolfacts.AnalyticsViews)
	}
	if _, ok := ToolByName("nope"); ok {
		t.Error("ToolByName found a tool that does not exist")
	}
}

// Every write request is marked Write and every read request is not; reads use only GET or
// POST, and only search_corpus and export_references(doc_ids) POST.
func TestWriteFlagOnRequests(t *testing.T) {
	for _, tool := range Tools {
		t.Run(tool.Name, func(t *testing.T) {
			api := newFakeAPI()
			if _, te := callTool(t, api, tool.Name, tool.Example); te != nil {
				t.Fatalf("representative call failed: %v", te)
			}
			reqs := api.requests()
			if len(reqs) == 0 {
				t.Fatal("no request made")
			}
			anyWrite := false
			for _, r := range reqs {
				anyWrite = anyWrite || r.Write
				if !tool.RequiresConfirmation {
					if r.Write {
						t.Errorf("read tool sent a Write request %s %s", r.Method, r.Path)
					}
					if r.Method != http.MethodGet && r.Method != http.MethodPost {
						t.Errorf("read tool used %s", r.Method)
					}
					if r.Method == http.MethodPost && tool.Name != "search_corpus" && tool.Name != "export_references" {
						t.Errorf("read tool %s POSTed %s", tool.Name, r.Path)
					}
				}
				if r.Write && r.Method == http.MethodGet {
					t.Errorf("GET %s marked Write", r.Path)
				}
			}
			if tool.RequiresConfirmation && !anyWrite {
				t.Error("write tool sent no Write request")
			}
		})
	}
}
