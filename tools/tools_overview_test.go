package tools

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/resmonsim"
)

// The overview tools: list_sources, get_analytics, get_watchdog_findings.

func TestListSourcesGivesKeyStatusNeverAKey(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "list_sources", nil)
	backendtest.WantNoErr(t, te)
	text := mustJSON(t, out)
	if strings.Contains(text, "sk-must-not-appear") {
		t.Fatal("a credential value reached the answer")
	}
	o := ValMap(out)
	if o["count"] != 2 || o["total"] != 2 {
		t.Errorf("count/total = %v/%v", o["count"], o["total"])
	}
	core := ValMap(ValList(o["sources"])[1])
	if core["credential_alias"] != "core_api_key" || core["credential_status"] != "present" || core["key_required"] != true || core["attribution"] != nil {
		t.Errorf("core = %v", core)
	}
	arxiv := ValMap(ValList(o["sources"])[0])
	if arxiv["credential_alias"] != nil || arxiv["credential_status"] != nil || arxiv["coverage"] != "Physics" {
		t.Errorf("arxiv = %v", arxiv)
	}
	paged, _ := callTool(t, api, "list_sources", map[string]any{"limit": 1, "offset": 1})
	if p := ValMap(paged); p["count"] != 1 || p["total"] != 2 || ValMap(ValList(p["sources"])[0])["slug"] != "core" {
		t.Errorf("paged = %v", p)
	}

	broken := newFakeAPI()
	broken.override = func(r *backend.Request) (any, error, bool) {
		if r.Path == "/api/credentials" {
			return nil, backend.NewError(backend.CodeUpstreamError, "resmon reported an internal error.", nil), true
		}
		return nil, nil, false
	}
	out, te = callTool(t, broken, "list_sources", nil)
	backendtest.WantNoErr(t, te)
	if s := ValMap(ValList(ValMap(out)["sources"])[1]); s["credential_status"] != nil {
		t.Errorf("status with no credentials answer = %v", s["credential_status"])
	}
	broken.override = func(r *backend.Request) (any, error, bool) {
		return nil, backend.NewError(backend.CodeUpstreamError, "catalog broke", nil), true
	}
	_, te = callTool(t, broken, "list_sources", nil)
	backendtest.WantErr(t, te, backend.CodeUpstreamError, "catalog broke")
}

func TestAnalyticsViewsAndWatchdogReachTheirRoutes(t *testing.T) {
	api := newFakeAPI()
	for view, path := range analyticsPaths {
		api.reset()
		out, te := callTool(t, api, "get_analytics", map[string]any{"view": view})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["served"] != path || len(api.requests()) != 1 || api.requests()[0].Query != nil {
			t.Errorf("%s → %v", view, backendtest.Paths(api.requests()))
		}
	}
	api.reset()
	_, te := callTool(t, api, "get_analytics", map[string]any{"view": "volume", "window": "90d"})
	backendtest.WantNoErr(t, te)
	if got := backendtest.Paths(api.requests()); got[0] != "GET /api/analytics/publication-volume?window=90d" {
		t.Errorf("window = %v", got)
	}
	_, te = callTool(t, api, "get_analytics", map[string]any{"view": "weather"})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "Unknown view 'weather'. Expected one of: discovery-lag, keywords, overview, routine-health, sources, volume.")

	api.reset()
	callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": true})
	callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": false})
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/watchdog?include_muted=true", "GET /api/watchdog"}) {
		t.Errorf("watchdog = %v", got)
	}

}

// resmon 2.3 ignores include_muted and always lists muted findings; the tool leaves them out
// unless asked, keeps every caveat, and keeps the backend's counts (counts.muted).
func TestWatchdogLeavesMutedFindingsOutUnlessAsked(t *testing.T) {
	body := `{"checked_at":"2026-09-21T13:30:00Z","findings":[
	  {"key":"source_errors:a","muted":false},{"key":"source_quiet:b","muted":true}],
	  "counts":{"broken":1,"unusual":1,"advice":0,"muted":1,"alarms":1},
	  "not_enough_data":[{"reason":"1 completed run; a cadence needs 3."}],"sufficient":true}`
	for _, tc := range []struct {
		args map[string]any
		keys []string
	}{
		{map[string]any{}, []string{"source_errors:a"}},
		{map[string]any{"include_muted": false}, []string{"source_errors:a"}},
		{map[string]any{"include_muted": true}, []string{"source_errors:a", "source_quiet:b"}},
	} {
		f := newFakeAPI()
		f.override = func(r *backend.Request) (any, error, bool) {
			return decodeJSONText(body), nil, r.Path == "/api/watchdog"
		}
		out, err := toolGetWatchdogFindings(context.Background(), f, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		m := out.(map[string]any)
		var got []string
		for _, x := range m["findings"].([]any) {
			got = append(got, x.(map[string]any)["key"].(string))
		}
		if len(got) != len(tc.keys) || got[0] != tc.keys[0] || (len(got) > 1 && got[1] != tc.keys[1]) {
			t.Errorf("%v: findings %v, want %v", tc.args, got, tc.keys)
		}
		if m["not_enough_data"] == nil || m["counts"].(map[string]any)["muted"] == nil {
			t.Errorf("%v: caveats or counts were dropped: %v", tc.args, m)
		}
	}
}

// TestOverviewToolsAgainstTheSimulator: every overview tool through the real HTTP client against an in-process simulator.
func TestOverviewToolsAgainstTheSimulator(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	t.Run("list_sources", func(t *testing.T) {
		out, te := callTool(t, api, "list_sources", map[string]any{"limit": 5})
		backendtest.WantNoErr(t, te)
		if o := ValMap(out); o["count"] != 5 || o["total"] != 27 {
			t.Errorf("count/total = %v/%v", o["count"], o["total"])
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/repositories/catalog", Status: 500, Count: 1})
		_, te = callTool(t, api, "list_sources", nil)
		backendtest.WantErr(t, te, backend.CodeUpstreamError, "")
	})
	t.Run("get_analytics", func(t *testing.T) {
		for view := range analyticsPaths {
			out, te := callTool(t, api, "get_analytics", map[string]any{"view": view})
			backendtest.WantNoErr(t, te)
			if ValMap(out) == nil {
				t.Errorf("%s: %v", view, out)
			}
		}
		_, te := callTool(t, api, "get_analytics", map[string]any{"view": "weather"})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "routine-health")
	})
	t.Run("get_watchdog_findings", func(t *testing.T) {
		out, te := callTool(t, api, "get_watchdog_findings", map[string]any{"include_muted": true})
		backendtest.WantNoErr(t, te)
		if ValMap(out)["thresholds"] == nil {
			t.Errorf("watchdog = %v", out)
		}
		sim.SetFault(resmonsim.Fault{PathPrefix: "/api/watchdog", Status: 500, Count: 1})
		_, te = callTool(t, api, "get_watchdog_findings", nil)
		backendtest.WantErr(t, te, backend.CodeUpstreamError, "")
	})
}
