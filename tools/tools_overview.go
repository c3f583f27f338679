package tools

import (
	"context"
	"net/url"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/toolfacts"
)

// Overview tools: list_sources, get_analytics, get_watchdog_findings.

func toolListSources(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	limit, offset := limitArg(args), OffsetArg(args)
	res, err := callGet(ctx, api, "/api/repositories/catalog", nil)
	if err != nil {
		return nil, err
	}
	catalog, terr := replyList(res, "the source catalog")
	if terr == nil {
		terr = rowsHolding(catalog, "the source catalog", "slug", "api_key_requirement") // never an invented "no key needed"
	}
	if terr != nil {
		return nil, terr
	}
	// Key status is a convenience: a keyring that cannot be read leaves the statuses null
	// rather than hiding the sources.
	creds := map[string]any{}
	if cr, err := callGet(ctx, api, "/api/credentials", nil); err == nil {
		if m := ValMap(ValMap(cr)["credentials"]); m != nil {
			creds = m
		}
	}
	rows := make([]any, 0, len(catalog))
	for _, entry := range catalog {
		e := ValMap(entry)
		alias, _ := e["credential_name"].(string)
		var status any
		if alias != "" {
			// Only the status is copied; any value-like field the backend might add is not.
			status = ValMap(creds[alias])["status"]
		}
		attribution := e["attribution"]
		if !pyTruthy(attribution) {
			attribution = nil
		}
		var aliasOut any
		if alias != "" {
			aliasOut = alias
		}
		rows = append(rows, map[string]any{
			"slug":                    e["slug"],
			"name":                    e["name"],
			"coverage":                e["subject_coverage"],
			"key_required":            e["api_key_requirement"] == "required",
			"credential_alias":        aliasOut,
			"credential_status":       status,
			"attribution":             attribution,
			"attribution_requirement": e["attribution_requirement"],
		})
	}
	pg := pageRows(rows, offset, limit)
	return map[string]any{"sources": pg, "count": len(pg), "total": len(rows)}, nil
}

// analyticsPaths maps the tool's view vocabulary to the backend routes (three names differ).
var analyticsPaths = map[string]string{
	"overview":       "/api/analytics/overview",
	"volume":         "/api/analytics/publication-volume",
	"sources":        "/api/analytics/source-contribution",
	"keywords":       "/api/analytics/keyword-contribution",
	"routine-health": "/api/analytics/routine-health",
	"discovery-lag":  "/api/analytics/discovery-lag",
}

// analyticsKeys is the key each view's reply must hold for it to be that view.
var analyticsKeys = map[string]string{
	"overview":       "summary",
	"volume":         "series",
	"sources":        "sources",
	"keywords":       "keywords",
	"routine-health": "routines",
	"discovery-lag":  "sources",
}

func toolGetAnalytics(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	view, terr := requiredStringArg(args, "view")
	if terr != nil {
		return nil, terr
	}
	path, ok := analyticsPaths[view] // exactly as the schema's enum lists them
	if !ok {
		return nil, backend.InvalidArgument(enumSentences["get_analytics.view"](view, toolfacts.AnalyticsViews))
	}
	var q url.Values
	if w := stringArg(args, "window"); w != "" {
		q = url.Values{"window": {w}}
	}
	res, err := callGet(ctx, api, path, q)
	if err != nil {
		return nil, err
	}
	if _, terr := replyObject(res, "the "+view+" analytics view", analyticsKeys[view]); terr != nil {
		return nil, terr
	}
	return res, nil
}

func toolGetWatchdogFindings(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	muted, _ := flagArg(args, "include_muted")
	var q url.Values
	if muted {
		q = url.Values{"include_muted": {"true"}}
	}
	// Passed through whole — the watchdog's own list of what it cannot judge must reach the
	// caller — except that resmon 2.3 ignores include_muted and always lists muted findings, so
	// they are left out here unless asked for (counts.muted still says how many there are).
	res, err := callGet(ctx, api, "/api/watchdog", q)
	if err != nil {
		return nil, err
	}
	body, findings, terr := objectWithRows(res, "the watchdog's findings", "findings")
	if terr == nil {
		terr = rowsHolding(findings, "the watchdog's findings", "key")
	}
	if terr != nil {
		return nil, terr
	}
	if muted {
		return body, nil
	}
	kept := make([]any, 0, len(findings))
	for _, f := range findings {
		if !pyTruthy(ValMap(f)["muted"]) {
			kept = append(kept, f)
		}
	}
	body["findings"] = kept
	return body, nil
}
