package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// The corpus tools: search_corpus, find_similar, explain_match, get_paper_lifecycle,
// get_search_record's passthrough, export_references.

func TestSearchCorpusPagesByCursorAndSaysWhichModeItServed(t *testing.T) {
	api := newFakeAPI()
	for _, off := range []any{25, "3", true, -1} {
		_, te := callTool(t, api, "search_corpus", map[string]any{"query": "x", "offset": off})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "cursor")
	}
	if len(api.requests()) != 0 {
		t.Fatal("refused offset still made a request")
	}
	_, te := callTool(t, api, "search_corpus", map[string]any{"query": "x", "mode": "Fuzzy"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Unknown mode 'Fuzzy'. Use 'keyword' or 'semantic'.")
	_, te = callTool(t, api, "search_corpus", map[string]any{"query": ""})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'query' is required.")

	out, te := callTool(t, api, "search_corpus", map[string]any{"query": "graphs", "offset": 0, "limit": 100,
		"cursor": "2026-02-20|8", "sources": []any{"arxiv"}, "date_from": "2026"})
	backendtest.WantNoErr(t, te)
	body := ValMap(api.requests()[0].Body)
	want := map[string]any{"query": "graphs", "limit": 100, "sort": "newest", "cursor": "2026-02-20|8",
		"sources": []string{"arxiv"}, "date_from": "2026"}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %#v\nwant %#v", body, want)
	}
	o := ValMap(out)
	if o["mode"] != "keyword" || o["next_cursor"] != "2026-02-20|8" || o["has_more"] != true || o["count"] != 1 {
		t.Errorf("keyword answer = %v", o)
	}
	paper := ValMap(ValList(o["papers"])[0])
	if paper["date"] != "2026-02-20" || paper["source"] != "semantic_scholar" || paper["abstract"] != nil || paper["distance"] != nil {
		t.Errorf("compact paper = %v", paper)
	}

	out, te = callTool(t, api, "search_corpus", map[string]any{"query": "graphs", "mode": "semantic"})
	backendtest.WantNoErr(t, te)
	o = ValMap(out)
	if o["mode"] != "semantic" || o["model"] != "mini" || o["ranked_count"] == nil || ValMap(ValList(o["papers"])[0])["distance"] == nil {
		t.Errorf("semantic answer = %v", o)
	}

	declined := newFakeAPI()
	declined.override = func(r *backend.Request) (any, error, bool) {
		return decodeJSONText(`{"results":[],"next_cursor":null,"has_more":false,"total":0,"total_is_capped":false,"sort":"newest",
"similarity_unavailable":"No embedding model is configured."}`), nil, true
	}
	out, _ = callTool(t, declined, "search_corpus", map[string]any{"query": "graphs", "mode": "semantic"})
	if o := ValMap(out); o["mode"] != "keyword" || o["mode_unavailable"] != "No embedding model is configured." {
		t.Errorf("declined semantic = %v", o)
	}
}

func TestFindSimilarAndTheCaveatReadsPassBodiesThrough(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "find_similar", map[string]any{"doc_id": 1, "limit": 7})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); got[0] != "GET /api/documents/1/similar?k=7" {
		t.Errorf("request = %v", got)
	}
	o := ValMap(out)
	if o["count"] != 1 || ValMap(ValList(o["papers"])[0])["distance"] == nil || o["model"] != "mini" {
		t.Errorf("answer = %v", o)
	}
	for tool, path := range map[string]string{
		"explain_match": "/api/documents/5/why", "get_paper_lifecycle": "/api/documents/5/lifecycle",
		"get_search_record": "/api/executions/5/search-record",
	} {
		api.reset()
		key := "doc_id"
		if tool == "get_search_record" {
			key = "exec_id"
		}
		out, te := callTool(t, api, tool, map[string]any{key: 5})
		backendtest.WantNoErr(t, te)
		if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET " + path}) {
			t.Errorf("%s: %v", tool, got)
		}
		if out == nil {
			t.Errorf("%s: body not passed through", tool)
		}
		_, te = callTool(t, api, tool, map[string]any{})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'"+key+"' is required.")
	}
	// The caveats travel untouched.
	out, _ = callTool(t, api, "explain_match", map[string]any{"doc_id": 1})
	if ValList(ValMap(out)["what_resmon_cannot_see"]) == nil {
		t.Error("explain_match dropped what_resmon_cannot_see")
	}
}

func TestExportReferencesByExecutionOrChosenPapers(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "export_references", map[string]any{"exec_id": 9, "doc_ids": []any{1}})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/executions/9/references?format=bibtex"}) {
		t.Errorf("exec export = %v", got)
	}
	if s, ok := out.(string); !ok || !strings.HasPrefix(s, "@misc") {
		t.Errorf("export text = %#v", out)
	}
	api.reset()
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{json.Number("3"), 4}, "format": "ris"})
	backendtest.WantNoErr(t, te)
	r := api.requests()[0]
	if r.Method != http.MethodPost || r.Path != "/api/export/references" ||
		!reflect.DeepEqual(r.Body, map[string]any{"document_ids": []int64{3, 4}, "format": "ris"}) {
		t.Errorf("doc export = %+v", r)
	}
	for _, args := range []map[string]any{{}, {"doc_ids": []any{}}, {"exec_id": nil}} {
		_, te = callTool(t, api, "export_references", args)
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Pass either 'exec_id' or 'doc_ids'.")
	}
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{"x"}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "doc_ids")
	_, te = callTool(t, api, "export_references", map[string]any{"doc_ids": "1,2"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "doc_ids")
}

// TestCorpusToolsAgainstTheSimulator: every corpus tool through the real HTTP client against an in-process simulator.
func TestCorpusToolsAgainstTheSimulator(t *testing.T) {
	_, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	t.Run("search_corpus", func(t *testing.T) {
		out, te := callTool(t, api, "search_corpus", map[string]any{"query": "for", "limit": 2})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		if o["mode"] != "keyword" || o["count"] != 2 || o["next_cursor"] == nil {
			t.Fatalf("answer = %v", o)
		}
		next, te := callTool(t, api, "search_corpus", map[string]any{"query": "for", "limit": 2, "cursor": o["next_cursor"]})
		backendtest.WantNoErr(t, te)
		if fmt.Sprint(ValMap(ValList(ValMap(next)["papers"])[0])["id"]) == fmt.Sprint(ValMap(ValList(o["papers"])[0])["id"]) {
			t.Error("the cursor did not advance")
		}
		_, te = callTool(t, api, "search_corpus", map[string]any{"query": "for", "cursor": "garbage"})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Malformed cursor")
		out, te = callTool(t, api, "search_corpus", map[string]any{"query": "for", "mode": "semantic"})
		backendtest.WantNoErr(t, te)
		if m := ValMap(out)["mode"]; m == "keyword" && ValMap(out)["mode_unavailable"] == nil {
			t.Error("a declined semantic search must say so")
		}
	})
	t.Run("find_similar", func(t *testing.T) {
		out, te := callTool(t, api, "find_similar", map[string]any{"doc_id": 1, "limit": 3})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		if o["count"] == 0 && o["reason"] == nil {
			t.Errorf("empty similar list without a reason: %v", o)
		}
		_, te = callTool(t, api, "find_similar", map[string]any{"doc_id": "one"})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "whole number")
	})
	t.Run("explain_match", func(t *testing.T) {
		out, te := callTool(t, api, "explain_match", map[string]any{"doc_id": 1})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["what_resmon_cannot_see"] == nil {
			t.Errorf("caveats stripped: %v", out)
		}
		_, te = callTool(t, api, "explain_match", map[string]any{"doc_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "No document with id 99999")
	})
	t.Run("get_paper_lifecycle", func(t *testing.T) {
		out, te := callTool(t, api, "get_paper_lifecycle", map[string]any{"doc_id": 7})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["events"] == nil {
			t.Errorf("lifecycle = %v", out)
		}
		_, te = callTool(t, api, "get_paper_lifecycle", map[string]any{"doc_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "")
	})
	t.Run("export_references", func(t *testing.T) {
		out, te := callTool(t, api, "export_references", map[string]any{"exec_id": 1})
		backendtest.WantNoErr(t, te)
		if s, ok := out.(string); !ok || !strings.Contains(s, "@") {
			t.Errorf("bibtex = %#v", out)
		}
		out, te = callTool(t, api, "export_references", map[string]any{"doc_ids": []any{1, 2}, "format": "ris"})
		backendtest.WantNoErr(t, te)
		if s, ok := out.(string); !ok || !strings.Contains(s, "TY  -") {
			t.Errorf("ris = %#v", out)
		}
		_, te = callTool(t, api, "export_references", map[string]any{"exec_id": 1, "format": "docx"})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Unknown format 'docx'")
		_, te = callTool(t, api, "export_references", map[string]any{"exec_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "")
	})
}
