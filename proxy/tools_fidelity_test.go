package proxy

import (
	"context"
	"testing"
)

// An unknown kind is refused before any request: resmon would answer it with an empty list,
// which a caller would report as "no profiles".
func TestListWatchProfilesRefusesAnUnknownKind(t *testing.T) {
	f := newFakeAPI()
	_, err := toolListWatchProfiles(context.Background(), f, map[string]any{"kind": "persn"})
	te, ok := err.(*ToolError)
	if !ok || te.Code != CodeInvalidArgument || te.Message != "Unknown kind 'persn'. Use one of: person, institution, group." {
		t.Fatalf("got %v", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests sent for a refused kind", n)
	}
	if _, err := toolListWatchProfiles(context.Background(), f, map[string]any{"kind": " institution "}); err != nil {
		t.Fatalf("a valid kind was refused: %v", err)
	}
	if rs := f.requests(); len(rs) != 1 || rs[0].Query.Get("kind") != "institution" {
		t.Fatalf("requests: %+v", rs)
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
		f.override = func(r *Request) (any, error, bool) { return decodeJSONText(body), nil, r.Path == "/api/watchdog" }
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

// get_routine's coverage: a backend that does not say whether the missed count is a floor
// leaves it unknown (null), never "exact"; a coverage answer without a summary is left off.
func TestGetRoutineCoverageNeverInventsExactness(t *testing.T) {
	routine := `{"id":2,"name":"r","schedule_cron":"0 7 * * 1","parameters":"{}","is_active":false,"missed_fires":{"count":0,"last_due_at_utc":null},"missed_fire_details":[]}`
	deliveries := `{"routine_id":2,"deliveries":[],"summary":{"targets":{},"enabled_target_count":0,"awaiting_review":0,"last":null}}`
	for _, tc := range []struct {
		name, coverage string
		want           any // the lower-bound value, or "absent" for no coverage key
	}{
		{"flag missing", `{"summary":"s","missed_in_corpus_total":63}`, nil},
		{"flag true", `{"summary":"s","missed_in_corpus_total":63,"missed_in_corpus_total_is_lower_bound":true}`, true},
		{"flag false", `{"summary":"s","missed_in_corpus_total":63,"missed_in_corpus_total_is_lower_bound":false}`, false},
		{"no summary", `{"unexpected":"shape"}`, "absent"},
	} {
		f := newFakeAPI()
		f.override = func(r *Request) (any, error, bool) {
			switch r.Path {
			case "/api/routines/2":
				return decodeJSONText(routine), nil, true
			case "/api/routines/2/coverage":
				return decodeJSONText(tc.coverage), nil, true
			case "/api/routines/2/deliveries":
				return decodeJSONText(deliveries), nil, true
			}
			return nil, nil, false
		}
		out, err := toolGetRoutine(context.Background(), f, map[string]any{"routine_id": 2})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cov, has := out.(map[string]any)["coverage"]
		if tc.want == "absent" {
			if has {
				t.Errorf("%s: coverage = %v, want no key", tc.name, cov)
			}
			continue
		}
		if !has {
			t.Fatalf("%s: no coverage", tc.name)
		}
		if got := cov.(map[string]any)["missed_in_corpus_count_is_lower_bound"]; got != tc.want {
			t.Errorf("%s: lower bound = %v, want %v", tc.name, got, tc.want)
		}
	}
}
