package resmonsim

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

func (s *Sim) summaryView() obj {
	c := s.data
	authors, sources := map[string]bool{}, map[string]bool{}
	first, last, withDOI := "", "", 0
	for _, d := range c.docs {
		for _, a := range splitAuthors(d.Authors) {
			authors[a] = true
		}
		sources[d.Source] = true
		if first == "" || d.FirstSeenAt < first {
			first = d.FirstSeenAt
		}
		if d.FirstSeenAt > last {
			last = d.FirstSeenAt
		}
		if d.DOI != "" {
			withDOI++
		}
	}
	completed := 0
	for _, e := range c.execs {
		if e.Status == "completed" {
			completed++
		}
	}
	var cov any
	if len(c.docs) > 0 {
		cov = round(float64(withDOI)/float64(len(c.docs)), 4)
	}
	return o("documents", len(c.docs), "unique_papers", len(c.docs), "distinct_authors", len(authors), "sources", len(sources),
		"completed_executions", completed, "first_seen", ns(first), "last_seen", ns(last), "doi_coverage", cov,
		"sample_size", len(c.docs), "sufficient", len(c.docs) > 0)
}

func (s *Sim) volumeView(groupBy string, months int) obj {
	counts := map[string]map[string]int{}
	groupTotals := map[string]int{}
	sample := 0
	for _, d := range s.data.docs {
		if len(d.PublicationDate) < 7 {
			continue
		}
		month := d.PublicationDate[:7]
		keys := []string{d.Source}
		if groupBy == "category" {
			keys = splitAuthors(d.Categories)
			if len(keys) == 0 {
				keys = []string{"(uncategorised)"}
			}
		}
		if counts[month] == nil {
			counts[month] = map[string]int{}
		}
		for _, k := range keys {
			counts[month][k]++
			groupTotals[k]++
		}
		sample++
	}
	groups := sortedKeys(groupTotals)
	sort.SliceStable(groups, func(i, j int) bool { return groupTotals[groups[i]] > groupTotals[groups[j]] })
	top := groups
	if len(top) > 8 {
		top = append(append([]string{}, groups[:8]...), "other")
	}
	monthList := sortedKeys(counts)
	if len(monthList) > months {
		monthList = monthList[len(monthList)-months:]
	}
	series := []any{}
	for _, m := range monthList {
		g, total := obj{}, 0
		for _, k := range sortedKeys(counts[m]) {
			name := k
			if !contains(top, k) {
				name = "other"
			}
			n, _ := g.get(name)
			prev, _ := n.(int)
			g = g.set(name, prev+counts[m][k])
			total += counts[m][k]
		}
		series = append(series, o("month", m, "total", total, "groups", g))
	}
	var reason any
	if sample == 0 {
		reason = "No papers with a usable publication date yet."
	}
	return o("group_by", groupBy, "groups", strSlice(top), "series", series, "sample_size", sample, "sufficient", sample > 0,
		"insufficient_reason", reason)
}

func (s *Sim) sourceContributionView() obj {
	totals := map[string]int{}
	for _, d := range s.data.docs {
		totals[d.Source]++
	}
	list := []any{}
	for _, src := range sortedKeys(totals) {
		// Papers a second source also holds: those sharing a title word-set with another source's paper.
		dup := 0
		for _, d := range s.data.docs {
			if d.Source != src {
				continue
			}
			for _, x := range s.data.docs {
				if x.Source != src && x.Title == d.Title {
					dup++
					break
				}
			}
		}
		share := 0.0
		if totals[src] > 0 {
			share = float64(totals[src]-dup) / float64(totals[src])
		}
		list = append(list, o("source", src, "total", totals[src], "unique_papers", totals[src]-dup, "duplicated", dup,
			"unique_share", round(share, 4)))
	}
	var reason any
	if len(totals) < 2 {
		reason = "Overlap needs at least two sources to compare."
	}
	return o("sources", list, "sample_size", len(s.data.docs), "sufficient", len(totals) >= 2, "insufficient_reason", reason)
}

func (s *Sim) routineHealthView() obj {
	list := []any{}
	for _, r := range s.data.routines {
		var runs []*execution
		for _, e := range s.data.execs {
			if e.RoutineID == r.ID && e.Status == "completed" {
				runs = append(runs, e)
			}
		}
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].Start < runs[j].Start })
		series := []any{}
		totalNew, since := 0, 0
		lastNew := ""
		for _, e := range runs {
			series = append(series, o("start_time", e.Start, "new_results", e.NewCount, "total_results", e.ResultCount))
			totalNew += e.NewCount
			if e.NewCount > 0 {
				since, lastNew = 0, e.Start
			} else {
				since++
			}
		}
		status := "healthy"
		switch {
		case len(runs) < 3:
			status = "insufficient_data"
		case since >= 3:
			status = "stale"
		}
		missed, lastMissed := 0, ""
		for _, m := range r.Missed {
			missed++
			if m.DueAt > lastMissed {
				lastMissed = m.DueAt
			}
		}
		list = append(list, o("routine_id", r.ID, "name", r.Name, "schedule_cron", r.Cron, "is_active", r.IsActive,
			"runs", len(runs), "series", series, "runs_since_new", since, "last_new_result_at", ns(lastNew), "total_new", totalNew,
			"status", status, "sample_size", len(runs), "sufficient", len(runs) >= 3, "missed_fires", missed,
			"last_missed_fire_at", ns(lastMissed)))
	}
	var reason any
	if len(s.data.routines) == 0 {
		reason = "No routines created yet."
	}
	return o("routines", list, "minimum_runs", 3, "stale_after", 3, "sample_size", len(s.data.routines),
		"sufficient", len(s.data.routines) > 0, "insufficient_reason", reason)
}

func (s *Sim) discoveryLagView() obj {
	lags := map[string][]float64{}
	for _, d := range s.data.docs {
		if len(d.PublicationDate) != 10 {
			continue
		}
		pub, err1 := time.Parse("2006-01-02", d.PublicationDate)
		seen, err2 := time.Parse(sqlTime, d.FirstSeenAt)
		if err1 != nil || err2 != nil {
			continue
		}
		lags[d.Source] = append(lags[d.Source], seen.Sub(pub).Hours()/24)
	}
	list := []any{}
	total := 0
	for _, src := range sortedKeys(lags) {
		l := lags[src]
		sort.Float64s(l)
		total += len(l)
		var med, fast, slow any
		if len(l) >= 5 {
			m := l[len(l)/2]
			if len(l)%2 == 0 {
				m = (l[len(l)/2-1] + l[len(l)/2]) / 2
			}
			med, fast, slow = round(m, 1), round(l[0], 1), round(l[len(l)-1], 1)
		}
		list = append(list, o("source", src, "sample_size", len(l), "sufficient", len(l) >= 5, "median_days", med,
			"fastest_days", fast, "slowest_days", slow))
	}
	var reason any
	if total < 5 {
		reason = "Needs at least 5 dated papers from a source."
	}
	return o("sources", list, "sample_size", total, "sufficient", total >= 5, "minimum_sample", 5, "insufficient_reason", reason)
}

func (s *Sim) hAnalyticsOverview(c *call) *reply {
	return okReply(o("summary", s.summaryView(), "source_contribution", s.sourceContributionView(),
		"discovery_lag", s.discoveryLagView(), "routine_health", s.routineHealthView(), "publication_volume", s.volumeView("source", 12)))
}

func (s *Sim) hAnalyticsSummary(c *call) *reply { return okReply(s.summaryView()) }

func (s *Sim) hPublicationVolume(c *call) *reply {
	months, qe := c.queryInt("months", 12, nil, nil)
	if qe != nil {
		return validation(*qe)
	}
	groupBy := c.queryStr("group_by", "source")
	if groupBy != "source" && groupBy != "category" {
		return detailReply(400, "group_by must be 'source' or 'category'")
	}
	return okReply(s.volumeView(groupBy, max(months, 1)))
}

func (s *Sim) hSourceContribution(c *call) *reply { return okReply(s.sourceContributionView()) }
func (s *Sim) hRoutineHealth(c *call) *reply      { return okReply(s.routineHealthView()) }
func (s *Sim) hDiscoveryLag(c *call) *reply       { return okReply(s.discoveryLagView()) }

func (s *Sim) hKeywordContribution(c *call) *reply {
	execID, qe := c.queryInt("execution_id", 0, nil, nil)
	if qe != nil {
		return validation(*qe)
	}
	_, scoped := c.q["execution_id"]
	scope := o("type", "corpus")
	execs := s.data.execs
	if scoped {
		e := s.data.execution(execID)
		if e == nil {
			return detailReply(404, fmt.Sprintf("No execution with id %d", execID))
		}
		scope, execs = o("type", "execution", "execution_id", execID), []*execution{e}
	}
	var kws []string
	docSet := map[int]bool{}
	for _, e := range execs {
		if kw, ok := paramKeywords(e.Params).([]any); ok {
			for _, k := range kw {
				if ks, _ := k.(string); ks != "" && !contains(kws, ks) {
					kws = append(kws, ks)
				}
			}
		}
		for _, id := range e.Docs {
			docSet[id] = true
		}
	}
	if !scoped {
		for _, d := range s.data.docs {
			docSet[d.ID] = true
		}
	}
	matchedBy := map[int][]string{}
	for id := range docSet {
		d := s.data.doc(id)
		text := strings.ToLower(d.Title + " " + d.Abstract + " " + d.Categories + " " + d.Authors)
		for _, k := range kws {
			if strings.Contains(text, strings.ToLower(strings.Trim(k, `"`))) {
				matchedBy[id] = append(matchedBy[id], k)
			}
		}
	}
	list := []any{}
	for _, k := range kws {
		matched, unique := 0, 0
		for _, ks := range matchedBy {
			if contains(ks, k) {
				matched++
				if len(ks) == 1 {
					unique++
				}
			}
		}
		var share any
		if len(docSet) >= 10 && matched > 0 {
			share = round(float64(unique)/float64(matched), 4)
		}
		list = append(list, o("keyword", k, "matched", matched, "unique", unique, "shared", matched-unique,
			"contains_operators", operatorRE().MatchString(k), "unique_share", share))
	}
	var reason any
	switch {
	case len(kws) == 0:
		reason = "No keywords have been recorded on any run yet."
	case len(docSet) == 0:
		reason = "No papers to measure against yet."
	}
	return okReply(o("scope", scope, "keywords", list, "documents_considered", len(docSet), "documents_matched", len(matchedBy),
		"documents_unexplained", len(docSet)-len(matchedBy), "sample_size", len(docSet), "minimum_sample_for_share", 10,
		"sufficient", reason == nil && len(docSet) >= 10, "insufficient_reason", reason,
		"fields_checked", []any{"title", "abstract", "categories", "authors"}))
}

// ---- watchdog ----

func (s *Sim) findings() []obj {
	var out []obj
	if len(s.data.execs) == 0 {
		return out
	}
	out = append(out, o("key", "source_errors:semantic_scholar", "severity", "broken", "kind", "source_errors",
		"scope", o("type", "source", "id", "semantic_scholar"),
		"title", "semantic_scholar has failed on its last 2 runs",
		"detail", "resmon got no answer from semantic_scholar on each of its last 2 runs. The most recent one: the source answered HTTP 503.",
		"what_to_do", "Check whether semantic_scholar is reachable and whether any key it needs is still valid. The key is stored but could not be read from the keychain.",
		"evidence", o("consecutive_errors", 2, "last_error", nil, "last_zero_reason", "upstream_failure", "last_success_at", nil, "runs_recorded", 2)))
	if r := s.data.routine(2); r != nil && !r.IsActive {
		out = append(out, o("key", "cadence_advice:2", "severity", "advice", "kind", "cadence_advice",
			"scope", o("type", "routine", "id", 2, "name", r.Name),
			"title", r.Name+" is inactive but still has delivery targets",
			"detail", "This routine is not scheduled, yet an email destination is configured for it.",
			"what_to_do", "Activate it to put it on its schedule, or remove the destination.",
			"evidence", o("is_active", false, "enabled_targets", 1)))
	}
	if r := s.data.routine(1); r != nil && len(r.Missed) > 0 {
		out = append(out, o("key", "routine_overdue:1", "severity", "unusual", "kind", "routine_overdue",
			"scope", o("type", "routine", "id", 1, "name", r.Name),
			"title", r.Name+" missed fires while resmon was closed",
			"detail", fmt.Sprintf("%d scheduled fires came due while resmon was not running.", len(r.Missed)),
			"what_to_do", "Keep resmon running (or install the background service) at the routine's scheduled time.",
			"evidence", o("missed_fires", len(r.Missed))))
	}
	return out
}

var severityOrder = map[string]int{"broken": 0, "unusual": 1, "advice": 2}

func (s *Sim) hWatchdog(c *call) *reply {
	fs := s.findings()
	keys := map[string]bool{}
	counts := map[string]int{}
	list := make([]obj, 0, len(fs))
	for _, f := range fs {
		k, _ := f.get("key")
		sev, _ := f.get("severity")
		keys[k.(string)] = true
		_, muted := s.data.mutes[k.(string)]
		if muted {
			counts["muted"]++
			f = append(f, kv{"muted", true}, kv{"muted_at", "2026-09-15T10:00:00Z"})
		} else {
			counts[sev.(string)]++
			f = append(f, kv{"muted", false}, kv{"muted_at", nil})
		}
		list = append(list, f)
	}
	for k := range s.data.mutes {
		if !keys[k] {
			delete(s.data.mutes, k) // mutes whose finding disappeared are pruned
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		mi, _ := list[i].get("muted")
		mj, _ := list[j].get("muted")
		if mi != mj {
			return mj == true
		}
		si, _ := list[i].get("severity")
		sj, _ := list[j].get("severity")
		if severityOrder[si.(string)] != severityOrder[sj.(string)] {
			return severityOrder[si.(string)] < severityOrder[sj.(string)]
		}
		ti, _ := list[i].get("title")
		tj, _ := list[j].get("title")
		return ti.(string) < tj.(string)
	})
	findings := make([]any, len(list))
	for i, f := range list {
		findings[i] = f
	}
	notEnough := []any{}
	if r := s.data.routine(3); r != nil {
		notEnough = append(notEnough, o("scope", o("type", "routine", "id", 3, "name", r.Name),
			"reason", "0 completed runs; a cadence needs 3.", "runs_recorded", 0, "runs_needed", 3))
	}
	return okReply(o("checked_at", c.now.UTC().Format(isoZ), "findings", findings,
		"counts", o("broken", counts["broken"], "unusual", counts["unusual"], "advice", counts["advice"], "muted", counts["muted"],
			"alarms", counts["broken"]+counts["unusual"]),
		"not_enough_data", notEnough,
		"watching", o("sources", len(s.watchedSources()), "routines", len(s.data.routines)),
		"thresholds", o("consecutive_errors", 3, "consecutive_zeros", 4, "min_baseline_runs", 5, "flatline_runs", 5,
			"overdue_cadence_multiple", 3, "overdue_floor_days", pyFloat(1), "cadence_lag_multiple", pyFloat(2), "min_runs_for_cadence", 3),
		"sufficient", len(s.data.execs) > 0))
}

func (s *Sim) watchedSources() map[string]bool {
	m := map[string]bool{}
	for _, e := range s.data.execs {
		for _, r := range e.Sources {
			m[r.Source] = true
		}
	}
	return m
}

func (s *Sim) muteBody(c *call) (string, any, *reply) {
	f, _, rep := c.validBody(muteBodyModel)
	if rep != nil {
		return "", nil, rep
	}
	return f.str("finding_key"), f["note"], nil
}

func (s *Sim) hMute(c *call) *reply {
	k, note, rep := s.muteBody(c)
	if rep != nil {
		return rep
	}
	s.data.mutes[k] = pyStr(note)
	return okReply(o("status", "muted", "finding_key", k))
}

func (s *Sim) hUnmute(c *call) *reply {
	k, _, rep := s.muteBody(c)
	if rep != nil {
		return rep
	}
	delete(s.data.mutes, k)
	return okReply(o("status", "unmuted", "finding_key", k))
}

// ---- search record (§6.13) ----

func (s *Sim) hSearchRecord(c *call) *reply {
	format := c.queryStr("format", "json")
	if format != "json" && format != "markdown" {
		return detailReply(400, "format must be 'json' or 'markdown'")
	}
	e := s.data.execution(c.id)
	if e == nil {
		return detailReply(404, fmt.Sprintf("No execution with id %d", c.id))
	}
	cov, outcomes := s.data.coverage(e)
	var routineName, routineSchedule any
	if r := s.data.routine(e.RoutineID); r != nil {
		routineName, routineSchedule = r.Name, r.Cron
	}
	get := func(k string) any { v, _ := e.Params.get(k); return v }
	srcList := []any{}
	covSources, _ := cov.get("sources")
	for _, so := range covSources.([]any) {
		oc := so.(obj)
		slug, _ := oc.get("source")
		status, _ := oc.get("status")
		count, _ := oc.get("result_count")
		zr, _ := oc.get("zero_reason")
		cat, _ := oc.get("category")
		recorded, _ := oc.get("outcome_recorded")
		var note any
		name := sourceName(slug.(string))
		switch {
		case recorded == false:
			note = "resmon did not record whether " + name + " answered on this run."
		case status == "skipped_missing_key":
			note = "Selected, but the API key it requires was not configured, so this source returned nothing. It did not contribute to the search."
		case status == "error":
			note = name + " did not answer on this run, so it contributed nothing to the search."
		case count == 0 && zr == nil:
			zr, note = "not_recorded", name+" returned nothing, and resmon did not record why."
		case count == 0:
			note = name + " answered and had nothing matching."
		}
		var records any = count
		srcList = append(srcList, o("source", slug, "coverage", oc, "records_identified", records, "status", status,
			"zero_reason", zr, "answered", cat == "answered", "note", note))
	}
	dedup := func(i int) any { return dedupVal(e, i) }
	crossRecorded := e.Dedup != nil
	var notRecordedReason any
	if !crossRecorded {
		notRecordedReason = "This run predates cross-source duplicate counting."
	}
	caveats := []any{
		"resmon retains cross-source duplicates rather than removing them. The count above says how many there were; none were discarded.",
		"This record covers one execution only; it is not a systematic review of the literature.",
		"resmon makes no screening decisions; every record identified is kept for a person to screen.",
	}
	if e.Status != "completed" {
		caveats = append(caveats, "This run did not complete, so the record may be incomplete.")
	}
	answered, _ := outcomes.get("answered")
	selected, _ := outcomes.get("selected")
	record := o("record_type", "resmon_search_record", "record_version", 1, "generated_at", c.now.UTC().Format(isoZ),
		"software", o("name", "resmon", "version", s.version, "citation", "resmon "+s.version),
		"search", o("execution_id", e.ID, "execution_type", e.Type, "run_at", e.Start, "completed_at", ns(e.End),
			"status", e.Status, "keywords", paramKeywords(e.Params), "query_as_sent", ns(paramQuery(e.Params)),
			"date_from", get("date_from"), "date_to", get("date_to"), "max_results_per_source", get("max_results"),
			"routine_name", routineName, "routine_schedule", routineSchedule, "configuration_name", ns(e.SavedConfigName)),
		"coverage", cov, "sources", srcList,
		"identification", o("records_identified", e.ResultCount, "sources_searched", selected, "sources_that_answered", answered,
			"prisma", "Records identified from databases"),
		"deduplication", o("records_processed", firstNonNil(dedup(0), e.ResultCount),
			"cross_source_duplicates", o("count", dedup(4), "recorded", crossRecorded, "prisma", "Duplicate records removed before screening",
				"meaning", "Records more than one source returned in this run. resmon keeps them.", "not_recorded_reason", notRecordedReason),
			"already_held", o("count", firstNonNil(dedup(2), e.ResultCount-e.NewCount), "prisma", nil,
				"meaning", "Records resmon already held before this run."),
			"discarded_unusable", o("count", firstNonNil(dedup(3), 0), "prisma", "Records marked as ineligible by automation tools",
				"meaning", "Records a source returned that could not be stored (no title or identifier)."),
			"records_added", o("count", e.NewCount, "prisma", "Records screened", "meaning", "Records new to the corpus from this run.")),
		"caveats", caveats)
	if format == "markdown" {
		var b strings.Builder
		fmt.Fprintf(&b, "# Search record — execution %d\n\n", e.ID)
		fmt.Fprintf(&b, "- Software: resmon %s\n- Run at: %s\n- Status: %s\n- Query: %s\n- Records identified: %d\n- Records added: %d\n\n",
			s.version, e.Start, e.Status, paramQuery(e.Params), e.ResultCount, e.NewCount)
		b.WriteString("## Caveats\n\n")
		for _, cv := range caveats {
			fmt.Fprintf(&b, "- %s\n", cv)
		}
		rep := &reply{status: 200, raw: []byte(b.String()), ctype: "text/markdown; charset=utf-8"}
		rep.headers = append(rep.headers, [2]string{"Content-Disposition", fmt.Sprintf(`attachment; filename="resmon-search-record-%d.md"`, e.ID)})
		return rep
	}
	return okReply(record)
}

func firstNonNil(v any, def any) any {
	if v == nil {
		return def
	}
	return v
}
