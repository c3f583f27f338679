package tools

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// The watch-profile tools: list_watch_profiles, get_watch_profile, get_profile_matches,
// create_watch_profile.

func TestWatchProfileReadsKeepBasisWarningsAndTheGlossary(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_watch_profiles", map[string]any{"kind": "person"})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); got[0] != "GET /api/profiles?kind=person" {
		t.Errorf("request = %v", got)
	}
	o := ValMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Errorf("answer = %v", o)
	}
	ada := ValMap(ValList(o["profiles"])[0])
	if !reflect.DeepEqual(ada["names"], []any{"Ada Lovelace", "A. Lovelace"}) || !reflect.DeepEqual(ada["identifiers"], []string{"openalex", "orcid"}) ||
		ada["orcid"] != "0000-0002-1825-0097" {
		t.Errorf("summary = %v", ada)
	}
	b := ValMap(ValList(o["profiles"])[1])
	if _, ok := b["basis_warning"]; !ok || b["basis_warning"] != "name only" || !reflect.DeepEqual(b["affiliations"], []any{}) {
		t.Errorf("second = %v", b)
	}

	api.reset()
	out, te = callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 1})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/profiles/1", "GET /api/profiles/1/matches?limit=1"}) {
		t.Errorf("requests = %v", got)
	}
	if m := ValMap(ValMap(out)["matches"]); fmt.Sprint(m["total"]) != "9" || m["by_basis"] == nil {
		t.Errorf("matches = %v", m)
	}

	api.reset()
	out, te = callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 1, "limit": 5, "offset": 10})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); got[0] != "GET /api/profiles/1/matches?limit=5&offset=10" {
		t.Errorf("request = %v", got)
	}
	o = ValMap(out)
	row := ValMap(ValList(o["matches"])[0])
	if row["basis"] != "name_only" || row["matched_author"] != "A. Lovelace" || ValMap(row["evidence"])["author"] != "A. Lovelace" || fmt.Sprint(row["doc_id"]) != "5" {
		t.Errorf("row = %v", row)
	}
	checkGlossary(t, o)

	empty := newFakeAPI()
	empty.override = func(*backend.Request) (any, error, bool) {
		return decodeJSONText(`{"matches":[],"total":0,"by_basis":{}}`), nil, true
	}
	out, _ = callTool(t, empty, "get_profile_matches", map[string]any{"profile_id": 1})
	checkGlossary(t, ValMap(out))
}

func checkGlossary(t *testing.T, o map[string]any) {
	t.Helper()
	g := ValMap(o["what_a_basis_means"])
	if got := sortedKeys(g); !reflect.DeepEqual(got, []string{"identifier", "name+affiliation", "name_only"}) {
		t.Errorf("glossary keys = %v", got)
	}
}

func TestCreateWatchProfileLiftsTheBasisWarning(t *testing.T) {
	api := newFakeAPI()
	_, te := callTool(t, api, "create_watch_profile", map[string]any{})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'name' is required.")
	out, te := callTool(t, api, "create_watch_profile", map[string]any{"name": "Ada", "aliases": []any{"A. L."}, "affiliations": []any{"AEG"}})
	backendtest.WantNoErr(t, te)
	body := ValMap(api.requests()[0].Body)
	want := map[string]any{"kind": "person", "display_name": "Ada",
		"names":       []any{map[string]any{"value": "Ada"}, map[string]any{"value": "A. L."}},
		"identifiers": map[string]any{}, "affiliations": []string{"AEG"}, "field_hints": []string{}}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %#v", body)
	}
	o := ValMap(out)
	if o["basis_warning"] == nil || !strings.HasPrefix(o["detail"].(string), "Created. This profile has neither") {
		t.Errorf("warning not lifted: %v", o)
	}
	api.reset()
	out, _ = callTool(t, api, "create_watch_profile", map[string]any{"name": "Ada", "orcid": " 0000-0002-1825-0097 "})
	ids := ValMap(ValMap(api.requests()[0].Body)["identifiers"])
	if o := ValMap(ids["orcid"]); o["value"] != "0000-0002-1825-0097" || o["cited"] != "entered through an MCP client" {
		t.Errorf("orcid = %v", ids)
	}
	if o := ValMap(out); o["basis_warning"] != nil || !strings.Contains(o["detail"].(string), "by identity") {
		t.Errorf("answer = %v", o)
	}
}

// An unknown kind is refused before any request: resmon would answer it with an empty list,
// which a caller would report as "no profiles".
func TestListWatchProfilesRefusesAnUnknownKind(t *testing.T) {
	f := newFakeAPI()
	_, te := callTool(t, f, "list_watch_profiles", map[string]any{"kind": "persn"})
	if te == nil || te.Code != backend.CodeInvalidArgument || te.Message != "Unknown kind 'persn'. Use one of: person, institution, group." {
		t.Fatalf("got %v", te)
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests sent for a refused kind", n)
	}
	if _, te := callTool(t, f, "list_watch_profiles", map[string]any{"kind": "institution"}); te != nil {
		t.Fatalf("a valid kind was refused: %v", te)
	}
	if rs := f.requests(); len(rs) != 1 || rs[0].Query.Get("kind") != "institution" {
		t.Fatalf("requests: %+v", rs)
	}
}

// TestProfileToolsAgainstTheSimulator: every profiles tool through the real HTTP client against an in-process simulator.
func TestProfileToolsAgainstTheSimulator(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	t.Run("list_watch_profiles", func(t *testing.T) {
		out, te := callTool(t, api, "list_watch_profiles", nil)
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		if o["total"] != 3 {
			t.Errorf("total = %v", o["total"])
		}
		for _, p := range ValList(o["profiles"]) {
			if _, ok := ValMap(p)["basis_warning"]; !ok {
				t.Errorf("row without basis_warning: %v", p)
			}
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/profiles", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_watch_profiles", nil)
		backendtest.WantErr(t, te, backend.CodeUpstreamError, "")
	})
	t.Run("get_watch_profile", func(t *testing.T) {
		out, te := callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 1})
		backendtest.WantNoErr(t, te)
		if ValMap(ValMap(out)["profile"])["display_name"] != "Ada Lovelace" || ValMap(ValMap(out)["matches"])["total"] == nil {
			t.Errorf("profile = %v", out)
		}
		_, te = callTool(t, api, "get_watch_profile", map[string]any{"profile_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "That profile does not exist.")
	})
	t.Run("get_profile_matches", func(t *testing.T) {
		out, te := callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 3, "limit": 3})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		checkGlossary(t, o)
		for _, m := range ValList(o["matches"]) {
			for _, k := range []string{"basis", "matched_author", "evidence"} {
				if _, ok := ValMap(m)[k]; !ok {
					t.Errorf("match without %s: %v", k, m)
				}
			}
		}
		_, te = callTool(t, api, "get_profile_matches", map[string]any{"profile_id": 99999})
		backendtest.WantErr(t, te, backend.CodeNotFound, "")
	})
	t.Run("create_watch_profile", func(t *testing.T) {
		out, te := callTool(t, api, "create_watch_profile", map[string]any{"name": "Mary Somerville"})
		backendtest.WantNoErr(t, te)
		o := ValMap(out)
		if o["basis_warning"] == nil || !strings.HasPrefix(o["detail"].(string), "Created. ") {
			t.Errorf("no-identifier profile without its warning: %v", o)
		}
		_, te = callTool(t, api, "create_watch_profile", map[string]any{"name": "X", "orcid": "not-an-orcid"})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "")
	})
}
