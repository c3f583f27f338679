package tools

// handlers runs each row of toolfacts.Rows, keyed by the row's name: a tool is its row there
// and its handler here (TestEveryRowHasExactlyOneHandler).
var handlers = map[string]Handler{
	"health":                toolHealth,
	"search_corpus":         toolSearchCorpus,
	"find_similar":          toolFindSimilar,
	"list_sources":          toolListSources,
	"list_routines":         toolListRoutines,
	"get_routine":           toolGetRoutine,
	"list_executions":       toolListExecutions,
	"get_execution":         toolGetExecution,
	"get_execution_results": toolGetExecutionResults,
	"get_search_record":     toolGetSearchRecord,
	"explain_match":         toolExplainMatch,
	"get_paper_lifecycle":   toolGetPaperLifecycle,
	"get_analytics":         toolGetAnalytics,
	"get_watchdog_findings": toolGetWatchdogFindings,
	"export_references":     toolExportReferences,
	"list_watch_profiles":   toolListWatchProfiles,
	"get_watch_profile":     toolGetWatchProfile,
	"get_profile_matches":   toolGetProfileMatches,
	"run_sweep":             toolRunSweep,
	"create_routine":        toolCreateRoutine,
	"create_watch_profile":  toolCreateWatchProfile,
	"run_routine":           toolRunRoutine,
	"activate_routine":      routineToggle("activate"),
	"deactivate_routine":    routineToggle("deactivate"),
	"update_settings":       toolUpdateSettings,
}
