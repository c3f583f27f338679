package resmonsim

import "strings"

// Route is one method and path pattern the simulator serves; {id} stands for an integer.
type Route struct{ Method, Pattern string }

// routeDef is a Route with its FastAPI path-parameter name (for 422 locs) and handler.
type routeDef struct {
	Method, Pattern string
	param           string
	h               func(s *Sim, c *call) *reply
}

// matchPath reports whether path fits the pattern, returning the raw {id} segment.
func (rd *routeDef) matchPath(path string) (string, bool) {
	ps, xs := strings.Split(rd.Pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return "", false
	}
	raw := ""
	for i, p := range ps {
		if p == "{id}" {
			if xs[i] == "" {
				return "", false
			}
			raw = xs[i]
			continue
		}
		if p != xs[i] {
			return "", false
		}
	}
	return raw, true
}

// routeTable is in the app's registration order where it matters: literal segments such as
// /api/executions/active come before /api/executions/{exec_id}.
var routeTable []routeDef

func init() {
	r := func(method, pattern, param string, h func(*Sim, *call) *reply) {
		routeTable = append(routeTable, routeDef{method, pattern, param, h})
	}
	r("GET", "/api/health", "", (*Sim).hHealth)
	r("POST", "/api/explorer/search", "", (*Sim).hExplorerSearch)
	r("GET", "/api/documents/{id}/similar", "document_id", (*Sim).hSimilar)
	r("GET", "/api/documents/{id}/why", "doc_id", (*Sim).hWhy)
	r("GET", "/api/documents/{id}/lifecycle", "doc_id", (*Sim).hLifecycle)
	r("GET", "/api/repositories/catalog", "", (*Sim).hCatalog)
	r("GET", "/api/credentials", "", (*Sim).hCredentials)

	r("GET", "/api/routines", "", (*Sim).hRoutines)
	r("POST", "/api/routines", "", (*Sim).hCreateRoutine)
	r("GET", "/api/routines/{id}", "routine_id", (*Sim).hRoutine)
	r("PUT", "/api/routines/{id}", "routine_id", (*Sim).hUpdateRoutine)
	r("DELETE", "/api/routines/{id}", "routine_id", (*Sim).hDeleteRoutine)
	r("GET", "/api/routines/{id}/coverage", "routine_id", (*Sim).hRoutineCoverage)
	r("GET", "/api/routines/{id}/deliveries", "routine_id", (*Sim).hRoutineDeliveries)
	r("POST", "/api/routines/{id}/run", "routine_id", (*Sim).hRunRoutine)
	r("POST", "/api/routines/{id}/activate", "routine_id", (*Sim).hActivate)
	r("POST", "/api/routines/{id}/deactivate", "routine_id", (*Sim).hDeactivate)

	r("GET", "/api/executions", "", (*Sim).hExecutions)
	r("GET", "/api/executions/active", "", (*Sim).hActive)
	r("GET", "/api/executions/{id}", "exec_id", (*Sim).hExecution)
	r("GET", "/api/executions/{id}/references", "exec_id", (*Sim).hReferences)
	r("GET", "/api/executions/{id}/search-record", "exec_id", (*Sim).hSearchRecord)
	r("GET", "/api/executions/{id}/report", "exec_id", (*Sim).hReport)
	r("GET", "/api/executions/{id}/deliveries", "exec_id", (*Sim).hExecDeliveries)
	r("POST", "/api/executions/{id}/cancel", "exec_id", (*Sim).hCancel)
	r("POST", "/api/executions/{id}/restart", "exec_id", (*Sim).hRestartExec)
	r("POST", "/api/export/references", "", (*Sim).hExportReferences)
	r("POST", "/api/search/sweep", "", (*Sim).hSweep)
	r("POST", "/api/search/dive", "", (*Sim).hDive)

	r("GET", "/api/analytics/overview", "", (*Sim).hAnalyticsOverview)
	r("GET", "/api/analytics/summary", "", (*Sim).hAnalyticsSummary)
	r("GET", "/api/analytics/publication-volume", "", (*Sim).hPublicationVolume)
	r("GET", "/api/analytics/source-contribution", "", (*Sim).hSourceContribution)
	r("GET", "/api/analytics/keyword-contribution", "", (*Sim).hKeywordContribution)
	r("GET", "/api/analytics/routine-health", "", (*Sim).hRoutineHealth)
	r("GET", "/api/analytics/discovery-lag", "", (*Sim).hDiscoveryLag)
	r("GET", "/api/watchdog", "", (*Sim).hWatchdog)
	r("POST", "/api/watchdog/mute", "", (*Sim).hMute)
	r("POST", "/api/watchdog/unmute", "", (*Sim).hUnmute)

	r("GET", "/api/profiles", "", (*Sim).hProfiles)
	r("POST", "/api/profiles", "", (*Sim).hCreateProfile)
	r("GET", "/api/profiles/{id}", "profile_id", (*Sim).hProfile)
	r("GET", "/api/profiles/{id}/matches", "profile_id", (*Sim).hProfileMatches)

	r("GET", "/api/settings/ai/cli-status", "", (*Sim).hCLIStatus)
	for _, g := range settingsGroupOrder {
		r("GET", "/api/settings/"+g, "", settingsGet(g))
		r("PUT", "/api/settings/"+g, "", settingsPut(g))
	}
	r("GET", "/api/settings/execution", "", (*Sim).hExecSettingsGet)
	r("PUT", "/api/settings/execution", "", (*Sim).hExecSettingsPut)

	r("GET", "/api/deliveries/{id}/bundle", "delivery_id", (*Sim).hBundle)
}

// Routes returns every route the simulator serves, in registration order.
func Routes() []Route {
	out := make([]Route, len(routeTable))
	for i, rd := range routeTable {
		out[i] = Route{rd.Method, rd.Pattern}
	}
	return out
}

// Resolve reports the route method+path would reach. {id} segments must be all digits,
// as the app's int path parameters need (a non-numeric id is a 422, not a route).
func Resolve(method, path string) (Route, bool) {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if method == "HEAD" {
		method = "GET"
	}
	for i := range routeTable {
		rd := &routeTable[i]
		if rd.Method != method {
			continue
		}
		raw, ok := rd.matchPath(path)
		if !ok {
			continue
		}
		if rd.param != "" && strings.Trim(raw, "0123456789") != "" {
			continue
		}
		return Route{rd.Method, rd.Pattern}, true
	}
	return Route{}, false
}

func (s *Sim) hBundle(c *call) *reply {
	return detailReply(403, o("reason", "signature_invalid",
		"message", "This link is not valid for that delivery, or it has expired. Webhook bundle links last 24 hours."))
}
