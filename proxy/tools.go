package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// The tool table: the single source for tools/list, ReadTools and WriteTools. Rows are in
// the reference server's definition order (18 reads, then 7 writes); handlers live in
// tools_*.go, grouped by what they read.
//
// Annotation decisions for the writes (MCP: destructiveHint means "may perform destructive
// updates"; false means the tool only adds):
//   - run_sweep, run_routine, create_routine, create_watch_profile only add rows (an
//     execution, a routine, a profile); not destructive, not idempotent (each call adds one
//     more). The two runs query sources on the internet: OpenWorld.
//   - activate_routine / deactivate_routine flip one reversible flag; nothing is lost and the
//     opposite tool restores it, so not destructive. Idempotent: the routes are.
//   - update_settings overwrites values whose previous state is only kept in the answer's
//     diff: destructive. Idempotent: repeating the same settings changes nothing more.

// Tools is the contract v2.3 tool surface, in definition order.
var Tools = []Tool{
	{
		Name: "health",
		Description: "Whether resmon is running and which version answers, with its runtime identity. " +
			"Pass expected_runtime_id to require that this exact running app answers.",
		InputSchema: sObject(schemaProps{
			"expected_runtime_id": sString("Optional. A runtime_id seen earlier (canonical lowercase UUID4); the call fails unless that same running app answers."),
		}),
		Handler: toolHealth,
	},
	{
		Name: "search_corpus",
		Description: "Search papers resmon has already collected. mode 'keyword' (default) filters on every word; " +
			"'semantic' ranks by meaning and falls back to newest-first with mode_unavailable when it cannot. " +
			"Pages by cursor: pass next_cursor back as cursor (offset is refused).",
		InputSchema: sObject(schemaProps{
			"query":     sString("Text to search for."),
			"mode":      sEnum("keyword (default) or semantic.", "keyword", "semantic"),
			"sources":   sStrings("Only papers from these source slugs."),
			"date_from": sString("Earliest publication date, YYYY[-MM[-DD]]."),
			"date_to":   sString("Latest publication date, YYYY[-MM[-DD]]."),
			"limit":     sLimit(),
			"cursor":    sString("next_cursor from the previous page."),
		}, "query"),
		Handler: toolSearchCorpus,
	},
	{
		Name:        "find_similar",
		Description: "Papers nearest in meaning to a stored paper, with distances. An empty list always carries a reason.",
		InputSchema: sObject(schemaProps{
			"doc_id": sInt("Stored document id."),
			"limit":  sLimit(),
		}, "doc_id"),
		Handler: toolFindSimilar,
	},
	{
		Name:        "list_sources",
		Description: "The sources resmon can query: coverage, whether a key is required, and the stored key's status (never its value).",
		InputSchema: sObject(schemaProps{"limit": sLimit(), "offset": sOffset()}),
		Handler:     toolListSources,
	},
	{
		Name:        "list_routines",
		Description: "Saved routines: schedule, active flag, last run, and fires missed while resmon was closed.",
		InputSchema: sObject(schemaProps{
			"active_only": sBool("Only scheduled (active) routines."),
			"limit":       sLimit(),
			"offset":      sOffset(),
		}),
		Handler: toolListRoutines,
	},
	{
		Name: "get_routine",
		Description: "One routine in full: missed fires, coverage audit totals, and a delivery summary " +
			"(destination counts per channel and the last delivery's state; never an address).",
		InputSchema: sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		Handler:     toolGetRoutine,
	},
	{
		Name: "list_executions",
		Description: "Past and running executions, newest first. status may be running, completed, failed, cancelled " +
			"or interrupted (the process ended mid-run; not a failed search).",
		InputSchema: sObject(schemaProps{
			"routine_id": sInt("Only executions of this routine."),
			"status":     sEnum("Only executions with this status.", executionStatuses...),
			"limit":      sLimit(),
			"offset":     sOffset(),
		}),
		Handler: toolListExecutions,
	},
	{
		Name: "get_execution",
		Description: "One execution: status, per-source outcomes, timings, AI lane. Poll this after run_sweep or run_routine. " +
			"Pass expected_runtime_id to refuse an answer from a different running app.",
		InputSchema: sObject(schemaProps{
			"exec_id":             sInt("Execution id."),
			"expected_runtime_id": sString("Optional. A runtime_id from health (canonical lowercase UUID4); the call fails unless that same running app answers."),
		}, "exec_id"),
		Handler: toolGetExecution,
	},
	{
		Name:        "get_execution_results",
		Description: "The papers one execution found, paged. Each id is the stored document id, usable as explain_match's doc_id.",
		InputSchema: sObject(schemaProps{
			"exec_id": sInt("Execution id."),
			"limit":   sLimit(),
			"offset":  sOffset(),
		}, "exec_id"),
		Handler: toolGetExecutionResults,
	},
	{
		Name:        "get_search_record",
		Description: "The reproducible, PRISMA-shaped record of one execution; each source that returned nothing carries its reason.",
		InputSchema: sObject(schemaProps{"exec_id": sInt("Execution id.")}, "exec_id"),
		Handler:     toolGetSearchRecord,
	},
	{
		Name: "explain_match",
		Description: "Why a paper was collected: which keywords match in which field, and what resmon cannot verify. " +
			"Most sources rank by relevance, so a paper matching no keyword is expected, not a fault; repeat the caveats.",
		InputSchema: sObject(schemaProps{"doc_id": sInt("Stored document id.")}, "doc_id"),
		Handler:     toolExplainMatch,
	},
	{
		Name:        "get_paper_lifecycle",
		Description: "A paper's retractions, preprint-to-published links and version changes, each with its notice link.",
		InputSchema: sObject(schemaProps{"doc_id": sInt("Stored document id.")}, "doc_id"),
		Handler:     toolGetPaperLifecycle,
	},
	{
		Name:        "get_analytics",
		Description: "One analytics summary of the corpus: overview, volume, sources, keywords, routine-health or discovery-lag.",
		InputSchema: sObject(schemaProps{
			"view":   sEnum("Which summary.", analyticsViewNames()...),
			"window": sString("Optional time window, passed to resmon (resmon 2.3 answers for its whole history and ignores it)."),
		}, "view"),
		Handler: toolGetAnalytics,
	},
	{
		Name: "get_watchdog_findings",
		Description: "Problems the watchdog sees with sources and routines, each labelled broken or unusual with what to do " +
			"and the thresholds used, plus what it has too little data to judge.",
		InputSchema: sObject(schemaProps{"include_muted": sBool("Also list findings the user muted (left out otherwise; counts.muted says how many).")}),
		Handler:     toolGetWatchdogFindings,
	},
	{
		Name:        "export_references",
		Description: "Export references as text: pass exec_id (one execution's papers) or doc_ids (chosen papers).",
		InputSchema: sObject(schemaProps{
			"exec_id": sInt("Execution id."),
			"doc_ids": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "Stored document ids."},
			"format":  sEnum("bibtex (default), ris, csv or json.", "bibtex", "ris", "csv", "json"),
		}),
		Handler: toolExportReferences,
	},
	{
		Name:        "list_watch_profiles",
		Description: "Watched people, institutions and groups: names, identifier schemes, ORCID, affiliations, and basis_warning where matching can only be by name.",
		InputSchema: sObject(schemaProps{
			"kind":   sEnum("Only this kind.", "person", "institution", "group"),
			"limit":  sLimit(),
			"offset": sOffset(),
		}),
		Handler: toolListWatchProfiles,
	},
	{
		Name:        "get_watch_profile",
		Description: "One watch profile in full, with its match total and a count per basis.",
		InputSchema: sObject(schemaProps{"profile_id": sInt("Profile id.")}, "profile_id"),
		Handler:     toolGetWatchProfile,
	},
	{
		Name: "get_profile_matches",
		Description: "Papers matched to a watch profile, each with its basis, matched author and evidence. " +
			"Only basis 'identifier' means the source confirmed the person; name_only is not evidence of identity. " +
			"Repeat the basis whenever you report a match.",
		InputSchema: sObject(schemaProps{
			"profile_id": sInt("Profile id."),
			"limit":      sLimit(),
			"offset":     sOffset(),
		}, "profile_id"),
		Handler: toolGetProfileMatches,
	},

	// Writes: a person confirms each call.
	{
		Name: "run_sweep",
		Description: "Search the named sources now and store what they return. Returns execution_id at once; poll get_execution. " +
			"The run may end completed, failed, cancelled or interrupted (resmon closed mid-run).",
		InputSchema: sObject(schemaProps{
			"query":       sString("Search text sent to each source."),
			"sources":     sStrings("Source slugs (see list_sources)."),
			"date_from":   sString("Earliest publication date."),
			"date_to":     sString("Latest publication date."),
			"max_results": sMin(sInt("Most results to take from each source (default 50)."), 1),
			"ai_enabled":  sBool("Summarise with the configured AI lane."),
		}, "query", "sources"),
		RequiresConfirmation: true,
		OpenWorld:            true,
		Handler:              toolRunSweep,
	},
	{
		Name:        "create_routine",
		Description: "Create a saved routine. It is created inactive: nothing is scheduled until it is activated.",
		InputSchema: sObject(schemaProps{
			"name":     sString("Routine name."),
			"keywords": sStrings("Search keywords."),
			"sources":  sStrings("Source slugs."),
			"schedule": sString("Five-field cron expression."),
			"intent":   sString("Optional sentence the coverage audit compares results against."),
			"entity": map[string]any{
				"type":        "object",
				"description": "Optional: follow a watch profile instead of words.",
				"properties": schemaProps{
					"profile_id": sInt("Watch profile id."),
					"mode":       sEnum("What to follow.", "new_papers", "retractions"),
				},
				"required": []string{"profile_id", "mode"},
			},
			"ai_enabled": sBool("Summarise each run with the configured AI lane."),
		}, "name", "keywords", "sources", "schedule"),
		RequiresConfirmation: true,
		Handler:              toolCreateRoutine,
	},
	{
		Name:        "create_watch_profile",
		Description: "Create a person watch profile. Without an ORCID every match is by name only, and the answer says so.",
		InputSchema: sObject(schemaProps{
			"name":         sString("The person's name."),
			"orcid":        sString("ORCID iD, if known."),
			"orcid_cited":  sString("Where the ORCID was found."),
			"aliases":      sStrings("Other spellings of the name."),
			"affiliations": sStrings("Institutions."),
			"field_hints":  sStrings("Research fields."),
		}, "name"),
		RequiresConfirmation: true,
		Handler:              toolCreateWatchProfile,
	},
	{
		Name: "run_routine",
		Description: "Run a saved routine now, even an inactive one. Returns execution_id at once; poll get_execution. " +
			"If it is already running, the conflict error names that execution_id.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true,
		OpenWorld:            true,
		Handler:              toolRunRoutine,
	},
	{
		Name:                 "activate_routine",
		Description:          "Put a routine on its schedule.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true,
		Idempotent:           true,
		Handler:              routineToggle("activate"),
	},
	{
		Name:                 "deactivate_routine",
		Description:          "Take a routine off its schedule; it and everything it found are kept.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true,
		Idempotent:           true,
		Handler:              routineToggle("deactivate"),
	},
	{
		Name: "update_settings",
		Description: "Change named settings in one group and get a before/after diff. Groups: " + settingsGroupList + ". " +
			"Credentials and the execution limits cannot be changed here. Booleans take \"true\" or \"false\".",
		InputSchema: sObject(schemaProps{
			"group": sEnum("Settings group.", settingsGroups...),
			"settings": map[string]any{
				"type":                 "object",
				"description":          "Setting name to new value.",
				"additionalProperties": map[string]any{"type": "string"},
			},
		}, "group", "settings"),
		RequiresConfirmation: true,
		Destructive:          true,
		Idempotent:           true,
		Handler:              toolUpdateSettings,
	},
}

// ReadTools are the tools a harness may call without asking (RequiresConfirmation false).
func ReadTools() []string { return toolNames(false) }

// WriteTools are the tools a person confirms first (RequiresConfirmation true).
func WriteTools() []string { return toolNames(true) }

func toolNames(confirm bool) []string {
	var out []string
	for _, t := range Tools {
		if t.RequiresConfirmation == confirm {
			out = append(out, t.Name)
		}
	}
	return out
}

// ToolByName finds a row of the table.
func ToolByName(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Schema builders: small, so the table above reads as a table.

type schemaProps = map[string]any

func sObject(p schemaProps, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func sString(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

func sInt(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}

func sBool(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

func sStrings(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

func sEnum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

// sMin sets a schema's minimum (checked by checkArguments like every other schema rule).
func sMin(s map[string]any, lo int) map[string]any {
	s["minimum"] = lo
	return s
}

func sLimit() map[string]any {
	return map[string]any{"type": "integer", "default": listDefaultLimit, "minimum": 1, "maximum": listMaxLimit,
		"description": "Page size (default 25, at most 100)."}
}

func sOffset() map[string]any {
	return map[string]any{"type": "integer", "default": 0, "minimum": 0, "description": "Rows to skip."}
}

// Backend call shorthands for the handlers.

func callGet(ctx context.Context, api API, path string, q url.Values) (any, error) {
	return api.Call(ctx, &Request{Method: http.MethodGet, Path: path, Query: q})
}

func callPost(ctx context.Context, api API, path string, body any, write bool) (any, error) {
	return api.Call(ctx, &Request{Method: http.MethodPost, Path: path, Body: body, Write: write})
}

// asToolError returns err's *ToolError, or nil.
func asToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	return nil
}
