// Package toolfacts is the contract's tool table as data: each tool's name, access, input
// schema, description and caveats, annotations, paging and example arguments, and nothing
// that runs a tool.
package toolfacts

import "strings"

// The tool table: the single source for tools/list, ReadTools and WriteTools, the harness
// approval rules and `resmongw tools`. Rows are in the order of the contract's tool tables
// (the reads, then the writes; the app's own server lists export_references after the
// watch-profile reads instead); each row's handler is keyed to its name in the tools package
// (tools/handlers.go), so this package imports nothing that runs.
//
// The descriptions are what a model reads before it calls anything, so every caveat of the
// contract and of the app's own server is in them, in our words: basis and identity, zero
// reasons, inferred findings, the fall-back of semantic search, confirmation of writes.
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

// Rows is the contract v2.3 tool surface, in definition order.
var Rows = []Row{
	{
		Name:    "health",
		Summary: "Whether resmon is running, and its version",
		Description: "Whether resmon is running and which version answers, with its runtime identity. " +
			"Pass expected_runtime_id to insist that this exact running app answers; the check covers this one call only, " +
			"and a matching id is not authentication.",
		InputSchema: sObject(schemaProps{
			"expected_runtime_id": sString("Optional. A runtime_id seen earlier (canonical lowercase UUID4); the call fails unless that same running app answers."),
		}),
		Example: map[string]any{},
	},
	{
		Name:    "search_corpus",
		Summary: "Search the papers resmon has collected, by keyword or by meaning",
		Description: "Search the papers resmon has already collected (to ask the sources themselves, use run_sweep). " +
			"mode 'keyword' (the default) keeps papers containing every word of query; 'semantic' ranks the corpus by " +
			"closeness in meaning to query instead, so it finds papers that share no wording with it, and the two modes can " +
			"return different sets. The answer's mode says which one was served: when resmon cannot rank by meaning the " +
			"answer is newest-first with mode 'keyword' and a mode_unavailable sentence; never present that order as relevance. " +
			"Pages by cursor: pass next_cursor back as cursor (offset is refused).",
		InputSchema: sObject(schemaProps{
			"query": sString("Text to search for."),
			"mode": sDefault(sEnum("'keyword' filters on the words of query. 'semantic' ranks by closeness in meaning to query, "+
				"within sources and dates; it needs an embedding model set up in resmon, and without one the answer is keyword "+
				"order and says so in mode_unavailable. In a semantic answer, unranked_count papers have no vector and come "+
				"last, unordered.", "keyword", "semantic"), "keyword"),
			"sources":   sStrings("Only papers from these source slugs."),
			"date_from": sString("Earliest publication date, YYYY[-MM[-DD]]."),
			"date_to":   sString("Latest publication date, YYYY[-MM[-DD]]."),
			"limit":     sLimit(),
			"cursor":    sString("next_cursor from the previous page."),
		}, "query"),
		Paging:  &Paging{Items: "papers", By: PageCursor},
		Example: map[string]any{"query": "diffusion"},
	},
	{
		Name:    "find_similar",
		Summary: "The stored papers nearest in meaning to one paper",
		Description: "The stored papers nearest in meaning to one stored paper, with distances. An empty list always carries " +
			"a reason (this paper has no vector, nothing else is embedded, or this resmon cannot compare): it never means " +
			"that nothing similar exists.",
		InputSchema: sObject(schemaProps{
			"doc_id": sInt("Stored document id."),
			"limit":  sLimit(),
		}, "doc_id"),
		Paging:  &Paging{Items: "papers", By: PageNone},
		Example: map[string]any{"doc_id": 1},
	},
	{
		Name:        "list_sources",
		Summary:     "The sources resmon can query, and whether each has its key",
		Description: "The sources resmon can query: coverage, whether a key is required, and the stored key's status (present, absent or unreadable; never its value).",
		InputSchema: sObject(schemaProps{"limit": sLimit(), "offset": sOffset()}),
		Paging:      &Paging{Items: "sources", By: PageOffset},
		Example:     map[string]any{},
	},
	{
		Name:        "list_routines",
		Summary:     "The saved routines: schedule, active flag, last run",
		Description: "The saved routines: schedule, whether each is active (scheduled), sources, keywords, last run and its status, and fires missed while resmon was closed.",
		InputSchema: sObject(schemaProps{
			"active_only": sBool("Only scheduled (active) routines."),
			"limit":       sLimit(),
			"offset":      sOffset(),
		}),
		Paging:  &Paging{Items: "routines", By: PageOffset},
		Example: map[string]any{},
	},
	{
		Name:    "get_routine",
		Summary: "One routine in full, with coverage, missed fires and deliveries",
		Description: "One routine in full: its configuration, missed fires, a delivery summary (destination counts per channel " +
			"and the last delivery's state; never an address) and a coverage summary: how many of its results lie furthest " +
			"from its intent, and how many papers already in the corpus it never returned. Those counts are totals, a floor " +
			"where missed_in_corpus_count_is_lower_bound says so; intent_source says whether the audit measured against the " +
			"routine's intent or fell back to its own keywords (measuring the query against itself).",
		InputSchema: sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		Example:     map[string]any{"routine_id": 1},
	},
	{
		Name:    "list_executions",
		Summary: "Past and running executions, newest first",
		Description: "Past and running executions, newest first. status filters to running, completed, failed, cancelled " +
			"or interrupted (resmon stopped mid-run; not a failed search). total counts the most recent 500 runs; " +
			"total_is_capped says when older ones exist.",
		InputSchema: sObject(schemaProps{
			"routine_id": sInt("Only executions of this routine."),
			"status":     sEnum("Only executions with this status.", ExecutionStatuses...),
			"limit":      sLimit(),
			"offset":     sOffset(),
		}),
		Paging:  &Paging{Items: "executions", By: PageOffset},
		Example: map[string]any{},
	},
	{
		Name:    "get_execution",
		Summary: "One execution: status, per-source outcomes, timings",
		Description: "One execution: status, per-source outcomes, timings, AI lane. Poll this after run_sweep or run_routine. " +
			"Pass expected_runtime_id (from health) to refuse an answer from a different running app; it covers this call only.",
		InputSchema: sObject(schemaProps{
			"exec_id":             sInt("Execution id."),
			"expected_runtime_id": sString("Optional. A runtime_id from health (canonical lowercase UUID4); the call fails unless that same running app answers."),
		}, "exec_id"),
		Example: map[string]any{"exec_id": 1},
	},
	{
		Name:    "get_execution_results",
		Summary: "The papers one execution found",
		Description: "The papers one execution found, paged. Each id is the stored document id in this corpus, usable as " +
			"explain_match's doc_id; it is not an identifier that holds in another corpus.",
		InputSchema: sObject(schemaProps{
			"exec_id": sInt("Execution id."),
			"limit":   sLimit(),
			"offset":  sOffset(),
		}, "exec_id"),
		Paging:  &Paging{Items: "papers", By: PageOffset},
		Example: map[string]any{"exec_id": 1},
	},
	{
		Name:    "get_search_record",
		Summary: "The reproducible (PRISMA-shaped) record of one execution",
		Description: "The reproducible, PRISMA-shaped record of one execution. Every source that returned nothing carries its " +
			"recorded reason, or says none was recorded: runs from before resmon 1.8.6 carry no reason, and a zero without " +
			"a reason is not evidence that there was nothing to find. Its caveats are part of the record: repeat them.",
		InputSchema: sObject(schemaProps{"exec_id": sInt("Execution id.")}, "exec_id"),
		Example:     map[string]any{"exec_id": 1},
	},
	{
		Name:    "explain_match",
		Summary: "Why a paper was collected: which keywords matched, and where",
		Description: "Why a paper was collected: which keywords match it and in which field, and what resmon cannot verify. " +
			"Most sources rank by relevance, so a paper that matches none of the keywords is expected, not a fault. " +
			"The caveats are part of the answer: repeat them rather than summarise them away.",
		InputSchema: sObject(schemaProps{"doc_id": sInt("Stored document id.")}, "doc_id"),
		Example:     map[string]any{"doc_id": 1},
	},
	{
		Name:    "get_paper_lifecycle",
		Summary: "A paper's retractions, published versions and version changes",
		Description: "A paper's retractions, preprint-to-published links and version changes, each with its notice link. " +
			"No events with checked_at null means the paper was never checked, which is not a clean record.",
		InputSchema: sObject(schemaProps{"doc_id": sInt("Stored document id.")}, "doc_id"),
		Example:     map[string]any{"doc_id": 1},
	},
	{
		Name:    "get_analytics",
		Summary: "One analytics view of the corpus and run history",
		Description: "One summary view of the corpus and run history: overview, volume, sources, keywords, routine-health " +
			"or discovery-lag. Each says whether its sample is sufficient; a view without enough data is not a finding.",
		InputSchema: sObject(schemaProps{
			"view":   sEnum("Which summary.", AnalyticsViews...),
			"window": sString("Optional time window, passed to resmon (resmon 2.3 answers for its whole history and ignores it)."),
		}, "view"),
		Example: map[string]any{"view": "overview"},
	},
	{
		Name:    "get_watchdog_findings",
		Summary: "Problems the watchdog sees with sources and routines",
		Description: "Silent failures the watchdog sees in sources and routines. Each finding is labelled broken (a recorded " +
			"fact) or unusual (an inference, not a certainty), with what to do and the thresholds used; not_enough_data lists " +
			"what it has too little history to judge. Say which label a finding has when you report it.",
		InputSchema: sObject(schemaProps{"include_muted": sBool("Also list findings the user muted (left out otherwise; counts.muted says how many).")}),
		Example:     map[string]any{},
	},
	{
		Name:    "export_references",
		Summary: "Export references as BibTeX, RIS, CSV or JSON",
		Description: "Export references as BibTeX, RIS, CSV or JSON: pass exec_id (one execution's papers) or doc_ids (chosen papers). " +
			"BibTeX keys are unique within one file only; they are not stable identifiers of a paper.",
		InputSchema: sObject(schemaProps{
			"exec_id": sInt("Execution id."),
			"doc_ids": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "Stored document ids."},
			"format":  sEnum("bibtex (default), ris, csv or json.", "bibtex", "ris", "csv", "json"),
		}),
		Whole:   true,
		Example: map[string]any{"exec_id": 1, "format": "bibtex"},
	},
	{
		Name:    "list_watch_profiles",
		Summary: "The people, institutions and groups being watched",
		Description: "Watched people, institutions and groups: names, identifier schemes, ORCID, affiliations. basis_warning, " +
			"where present, says what every match for that profile can ever be (by name, or by name and affiliation; never " +
			"by identity): repeat it with anything you say about the profile's papers.",
		InputSchema: sObject(schemaProps{
			"kind":   sEnum("Only this kind.", "person", "institution", "group"),
			"limit":  sLimit(),
			"offset": sOffset(),
		}),
		Paging:  &Paging{Items: "profiles", By: PageOffset},
		Example: map[string]any{},
	},
	{
		Name:    "get_watch_profile",
		Summary: "One watch profile, with its match counts per basis",
		Description: "One watch profile in full, with its match total and a count per basis, so how many of its matches are " +
			"only name matches is part of the answer. Its basis_warning, when set, says what every match for it can ever be.",
		InputSchema: sObject(schemaProps{"profile_id": sInt("Profile id.")}, "profile_id"),
		Example:     map[string]any{"profile_id": 1},
	},
	{
		Name:    "get_profile_matches",
		Summary: "The papers matched to a watch profile, each with its basis",
		Description: "Papers matched to a watch profile. Every row carries its basis: 'identifier' means the source returned " +
			"this profile's ORCID on the paper; 'name+affiliation' and 'name_only' are string matches and are NOT evidence " +
			"that the paper is this person's. Never present a name_only match as the person's paper, and repeat the basis " +
			"whenever you report a match (what_a_basis_means explains each).",
		InputSchema: sObject(schemaProps{
			"profile_id": sInt("Profile id."),
			"limit":      sLimit(),
			"offset":     sOffset(),
		}, "profile_id"),
		Paging:  &Paging{Items: "matches", By: PageOffset},
		Example: map[string]any{"profile_id": 1},
	},

	// Writes: a person confirms each call.
	{
		Name:    "run_sweep",
		Summary: "Search sources now and store the results",
		Description: "Search the named sources now and store what they return. Returns execution_id at once while the run goes on " +
			"in resmon; poll get_execution. It may end completed, failed, cancelled or interrupted (resmon closed mid-run).",
		InputSchema: sObject(schemaProps{
			"query":       sString("Search text sent to each source."),
			"sources":     sStrings("Source slugs (see list_sources)."),
			"date_from":   sString("Earliest publication date."),
			"date_to":     sString("Latest publication date."),
			"max_results": sMin(sInt("Most results to take from each source (default 50)."), 1),
			"ai_enabled":  sBool("Summarise with the configured AI lane."),
		}, "query", "sources"),
		RequiresConfirmation: true,
		Destructive:          true, // spends the sources' quota, which no later call gives back
		OpenWorld:            true,
		Example:              map[string]any{"query": "diffusion", "sources": []any{"arxiv"}},
		Confirm:              confirmRunSweep,
	},
	{
		Name:    "create_routine",
		Summary: "Create a saved routine (inactive until activated)",
		Description: "Create a saved routine. It is created inactive: nothing runs on a schedule until the person activates it. " +
			"Give intent, what the routine is really for: without it the coverage audit falls back to the keywords, which " +
			"measures the query against itself. With entity the routine follows a watch profile instead of words and the " +
			"keywords are ignored, because narrowing a person by topic would hide the rest of their work.",
		InputSchema: sObject(schemaProps{
			"name":     sString("Routine name."),
			"keywords": sStrings("Search keywords (ignored with entity)."),
			"sources":  sStrings("Source slugs."),
			"schedule": sString("Five-field cron expression."),
			"intent":   sString("Optional. What the routine is for, in the person's own words; the coverage audit compares results against it. Never filled in from the keywords."),
			"entity": map[string]any{
				"type":        "object",
				"description": "Optional: follow a watch profile instead of words. keywords are then ignored.",
				"properties": schemaProps{
					"profile_id": sInt("Watch profile id, from list_watch_profiles or create_watch_profile."),
					"mode": sEnum("'new_papers' asks each source about the person and checks every answer locally; "+
						"'retractions' checks the papers already matched to them and reports what is on record, asking no source "+
						"and inventing no finding.", "new_papers", "retractions"),
				},
				"required": []string{"profile_id", "mode"},
			},
			"ai_enabled": sBool("Summarise each run with the configured AI lane."),
		}, "name", "keywords", "sources", "schedule"),
		RequiresConfirmation: true, // not Destructive: adds an inactive routine, changes nothing there
		Example:              map[string]any{"name": "Weekly", "keywords": []any{"quantum", "error"}, "sources": []any{"arxiv"}, "schedule": "0 7 * * 1"},
		Confirm:              confirmCreateRoutine,
	},
	{
		Name:    "create_watch_profile",
		Summary: "Create a person watch profile",
		Description: "Create a person watch profile. Only an ORCID makes a match evidence of identity: without one, every " +
			"match it can ever produce is a name match, and the answer says so in basis_warning, which is part of the result " +
			"(repeat it), not a footnote.",
		InputSchema: sObject(schemaProps{
			"name":         sString("The person's name as published."),
			"orcid":        sString("Their ORCID iD, if known: the only thing that makes a match evidence of identity rather than of a name."),
			"orcid_cited":  sString("Where the ORCID came from (a page, a paper, the person's own knowledge). An ORCID no one can trace back is an assertion."),
			"aliases":      sStrings("Other spellings of the name. Used to check a source's answers; not sent to the source, which is asked with one name."),
			"affiliations": sStrings("Institutions. A name with an affiliation is still not identity."),
			"field_hints":  sStrings("Research fields, used only to tell two people apart; never to narrow the search, which would hide their work."),
		}, "name"),
		RequiresConfirmation: true, // not Destructive: adds a profile, changes nothing there
		Example:              map[string]any{"name": "Ada Lovelace"},
		Confirm:              confirmCreateWatchProfile,
	},
	{
		Name:    "run_routine",
		Summary: "Run a saved routine now",
		Description: "Run a saved routine now, outside its schedule, even an inactive one (it stays inactive). Returns " +
			"execution_id at once; poll get_execution. If the routine is already running, the conflict error names that execution_id.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true,
		Destructive:          true, // spends the sources' quota, like run_sweep
		OpenWorld:            true,
		Example:              map[string]any{"routine_id": 1},
		Confirm:              confirmRunRoutine,
	},
	{
		Name:                 "activate_routine",
		Summary:              "Put a routine on its schedule",
		Description:          "Put a routine on its schedule, so that it runs by itself from then on. The person confirms this before it takes effect.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true,
		Destructive:          true, // from then on the routine spends quota on its schedule, unasked
		Idempotent:           true,
		Example:              map[string]any{"routine_id": 1},
		Confirm:              confirmActivateRoutine,
	},
	{
		Name:                 "deactivate_routine",
		Summary:              "Take a routine off its schedule",
		Description:          "Take a routine off its schedule; it and everything it found are kept.",
		InputSchema:          sObject(schemaProps{"routine_id": sInt("Routine id.")}, "routine_id"),
		RequiresConfirmation: true, // not Destructive: the routine and its findings are kept; activate undoes it
		Idempotent:           true,
		Example:              map[string]any{"routine_id": 1},
		Confirm:              confirmDeactivateRoutine,
	},
	{
		Name:    "update_settings",
		Summary: "Change settings in one group, with a before/after diff",
		Description: "Change named settings in one group (" + strings.Join(SettingsGroups, ", ") + ") and get a before/after diff of exactly " +
			"what changed, read back from resmon. It cannot change an API key, a password or anything else credential-shaped " +
			"(those are not settings; they are changed in the app), nor the execution limits. A key the group does not have " +
			"is refused, not ignored, and the refusal lists the group's real keys. Boolean settings take true or false.",
		InputSchema: sObject(schemaProps{
			"group": sEnum("Settings group.", SettingsGroups...),
			"settings": map[string]any{
				"type":                 "object",
				"description":          "Setting name to new value (text; true or false for a boolean setting). Call once with a wrong key to be told the group's keys.",
				"additionalProperties": map[string]any{"type": "string"},
			},
		}, "group", "settings"),
		RequiresConfirmation: true,
		Destructive:          true, // overwrites the person's settings; the old values are not kept
		Idempotent:           true,
		Example:              map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "low"}},
		Confirm:              confirmUpdateSettings,
	},
}

// ReadTools are the tools a harness may call without asking (RequiresConfirmation false).
func ReadTools() []string { return toolNames(false) }

// WriteTools are the tools a person confirms first (RequiresConfirmation true).
func WriteTools() []string { return toolNames(true) }

func toolNames(confirm bool) []string {
	var out []string
	for _, r := range Rows {
		if r.RequiresConfirmation == confirm {
			out = append(out, r.Name)
		}
	}
	return out
}

// ByName finds a row of the table.
func ByName(name string) (Row, bool) {
	for _, r := range Rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
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

// sDefault sets a schema's default (documentation for the harness: an absent argument means it).
func sDefault(s map[string]any, v any) map[string]any {
	s["default"] = v
	return s
}

// sMin sets a schema's minimum (checked by tools.CheckArguments like every other schema rule).
func sMin(s map[string]any, lo int) map[string]any {
	s["minimum"] = lo
	return s
}

func sLimit() map[string]any {
	return map[string]any{"type": "integer", "default": DefaultLimit, "minimum": 1, "maximum": MaxLimit,
		"description": "Page size (default 25, at most 100)."}
}

func sOffset() map[string]any {
	return map[string]any{"type": "integer", "default": 0, "minimum": 0, "description": "Rows to skip."}
}
