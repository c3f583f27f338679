package resmonsim

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

var uuid4RE = lazyRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

const msgBadRuntimeID = "expected_runtime_id must be a canonical lowercase UUID4"

func (s *Sim) identity(c *call) obj {
	return o("contract_version", 1, "runtime_id", c.inst.runtimeID, "schema_version", s.schemaVersion(),
		"corpus_id", nil, "build_id", nil)
}

func (s *Sim) schemaVersion() any {
	if n, err := strconv.Atoi(s.data.settings["schema_version"]); err == nil {
		return n
	}
	return nil
}

// checkExpected is §4: validated before any database access, so a mismatch beats a 404.
// A pre-2.3 backend ignores the parameter, as it ignores every unknown one.
func (s *Sim) checkExpected(c *call) *reply {
	if s.opts.NoIdentity {
		return nil
	}
	v, ok := c.q["expected_runtime_id"]
	if !ok {
		return nil
	}
	want := ""
	if len(v) > 0 {
		want = v[len(v)-1]
	}
	if !uuid4RE().MatchString(want) {
		return detailReply(422, msgBadRuntimeID)
	}
	if want != c.inst.runtimeID {
		return detailReply(409, o("code", "instance_mismatch", "message", "This request reached a different running app.",
			"expected_runtime_id", want, "actual_runtime_id", c.inst.runtimeID))
	}
	return nil
}

func (s *Sim) hHealth(c *call) *reply {
	if rep := s.checkExpected(c); rep != nil {
		return rep
	}
	body := o("status", "ok")
	if !s.opts.NoIdentity {
		body = append(body, kv{"identity", s.identity(c)})
	}
	return okReply(append(body, kv{"pid", os.Getpid()},
		kv{"started_at", s.startedAt.Format("2006-01-02T15:04:05.000000+00:00")},
		kv{"version", s.version},
		kv{"embeddings", o("extension", "v0.1.9", "reason", nil)},
		// Not in the real app's answer: says to the gateway (and status) that every answer is invented.
		kv{"simulated", true}))
}

// ---- execution rows ----

func dedupVal(e *execution, i int) any {
	if e.Dedup == nil {
		return nil
	}
	return e.Dedup[i]
}

func (c *corpus) executionRow(e *execution) obj {
	return o("id", e.ID, "execution_type", e.Type, "routine_id", nz(e.RoutineID), "saved_configuration_id", nz(e.SavedConfigID),
		"parameters", pyDumps(e.Params), "start_time", e.Start, "end_time", ns(e.End), "status", e.Status,
		"result_count", e.ResultCount, "new_result_count", e.NewCount, "log_path", ns(e.LogPath), "result_path", ns(e.ResultPath),
		"error_message", ns(e.ErrorMessage), "progress_events", ns(e.ProgressEvents), "current_stage", ns(e.CurrentStage),
		"owner_pid", nz(e.OwnerPID), "owner_runtime_id", ns(e.OwnerRuntimeID), "last_seen_at_utc", ns(e.LastSeen),
		"interrupted_reason", ns(e.InterruptedReason), "restarted_from", nz(e.RestartedFrom), "cancel_reason", ns(e.CancelReason),
		"dedup_total", dedupVal(e, 0), "dedup_new", dedupVal(e, 1), "dedup_duplicates", dedupVal(e, 2),
		"dedup_invalid", dedupVal(e, 3), "dedup_cross_source", dedupVal(e, 4), "request_id", ns(e.RequestID),
		"saved_configuration_name", ns(e.SavedConfigName))
}

func paramQuery(p obj) string {
	for _, k := range []string{"query", "q", "search_query"} {
		if v, ok := p.get(k); ok {
			if s, ok := v.(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

func paramKeywords(p obj) any {
	if v, ok := p.get("keywords"); ok {
		if l, ok := v.([]any); ok && len(l) > 0 {
			return l
		}
	}
	if q := paramQuery(p); q != "" {
		return []any{q}
	}
	return nil
}

func paramRepositories(p obj) any {
	if v, ok := p.get("repositories"); ok {
		if l, ok := v.([]any); ok {
			return l
		}
	}
	if v, ok := p.get("repository"); ok {
		if s, ok := v.(string); ok && s != "" {
			return []any{s}
		}
	}
	return nil
}

// executionTail is the derived keys of §6.9 in order.
func (c *corpus) executionTail(e *execution) obj {
	cov, outcomes := c.coverage(e)
	return o("coverage", cov, "query", ns(paramQuery(e.Params)), "keywords", paramKeywords(e.Params),
		"repositories", paramRepositories(e.Params), "total_results", e.ResultCount, "new_results", e.NewCount,
		"source_outcomes", outcomes)
}

func (c *corpus) executionListItem(e *execution) obj {
	return append(c.executionRow(e), c.executionTail(e)...)
}

// ---- coverage (§6.11) ----

var didNotAnswer = map[string]bool{"entity_unsupported": true, "missing_key": true, "parse_failure": true,
	"retired": true, "upstream_failure": true, "window_unanswerable": true}

func outcomeJSON(r *sourceRow, slug string) (obj, string) {
	if r == nil {
		return o("source", slug, "category", "unknown", "label", "unknown / outcome not recorded",
			"note", "Outcome not recorded; no attempt, failure or empty answer can be inferred.",
			"outcome_recorded", false, "status", nil, "result_count", nil, "zero_reason", nil, "recorded_at", nil,
			"genuine_empty", false), "unknown"
	}
	cat, label, note, genuine := "answered", "answered", "Recorded returned records; this is not the number newly added to the corpus.", false
	switch {
	case r.ZeroReason == "parse_failure":
		cat, label, note = "non_answer", "reply unreadable", "The source replied, but resmon could not read the reply."
	case r.Status != "ok" || didNotAnswer[r.ZeroReason]:
		cat, label, note = "non_answer", "did not answer", "The source did not answer this run ("+firstNonEmpty(r.ZeroReason, r.Status)+")."
	case r.ResultCount > 0:
	case r.ZeroReason == "answered_empty":
		label, note, genuine = "answered, zero", "The source answered and had nothing matching.", true
	case r.ZeroReason == "records_unusable" || r.ZeroReason == "rights_filtered":
		label, note = "answered; nothing storable", "The source answered, but none of its records could be stored."
	default:
		cat, label, note = "unknown", "zero, reason not recorded", "Zero records, and why was not recorded."
	}
	return o("source", r.Source, "category", cat, "label", label, "note", note, "outcome_recorded", true,
		"status", r.Status, "result_count", r.ResultCount, "zero_reason", ns(r.ZeroReason), "recorded_at", r.RecordedAt,
		"genuine_empty", genuine), cat
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// coverage builds the coverage object and the source_outcomes summary of an execution.
func (c *corpus) coverage(e *execution) (obj, obj) {
	selection := paramRepos(e.Params)
	known := len(selection) > 0
	rows := map[string]*sourceRow{}
	for i := range e.Sources {
		rows[e.Sources[i].Source] = &e.Sources[i]
	}
	var sources, additional []any
	counts := map[string]int{}
	genuine, notRecorded := 0, 0
	var couldNot []any
	add := func(r *sourceRow, slug string, extra bool) {
		oc, cat := outcomeJSON(r, slug)
		if extra {
			additional = append(additional, oc)
			return
		}
		sources = append(sources, oc)
		counts[cat]++
		if v, _ := oc.get("genuine_empty"); v == true {
			genuine++
		}
		if r == nil {
			notRecorded++
		}
		if cat == "non_answer" {
			couldNot = append(couldNot, slug)
		}
	}
	if known {
		for _, slug := range selection {
			add(rows[slug], slug, false)
		}
		for i := range e.Sources {
			if !contains(selection, e.Sources[i].Source) {
				add(&e.Sources[i], e.Sources[i].Source, true)
			}
		}
	} else {
		for i := range e.Sources {
			add(&e.Sources[i], e.Sources[i].Source, false)
		}
	}
	basis, basisLabel := "selected", "selected sources"
	if !known {
		basis, basisLabel = "recorded", "recorded sources"
	}
	total := len(sources)
	summary := fmt.Sprintf("%d %s %s: %d answered, %d recorded non-answer (could not answer), %d unknown.",
		total, basis, plural(total, "source", "sources"), counts["answered"], counts["non_answer"], counts["unknown"])
	if total == 0 {
		summary = "No source outcomes were recorded; the full selected set is unknown."
	}
	notes := []any{"Source selection comes from the saved repositories list, deduplicated by exact identifier.",
		"A source that answered with zero records is a genuine empty answer; one that did not answer says nothing about the literature."}
	if e.Status != "completed" {
		notes = append(notes, "This run is not completed; its recorded coverage may be incomplete.")
	}
	cov := o("execution_id", e.ID, "basis", basis, "basis_label", basisLabel, "selection_known", known, "total", total,
		"counts", o("answered", counts["answered"], "non_answer", counts["non_answer"], "unknown", counts["unknown"], "genuine_empty", genuine),
		"summary", summary, "sources", nonNilList(sources), "additional_sources", nonNilList(additional), "notes", notes)
	outcomes := o("selected", total, "answered", counts["answered"], "could_not_answer", counts["non_answer"],
		"not_recorded", notRecorded, "sources_that_could_not_answer", nonNilList(couldNot))
	return cov, outcomes
}

func nonNilList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// ---- routes ----

func (s *Sim) hExecutions(c *call) *reply {
	limit, e1 := c.queryInt("limit", 50, intp(1), intp(500))
	offset, e2 := c.queryInt("offset", 0, intp(0), nil)
	if rep := queryValidation(e1, e2); rep != nil {
		return rep
	}
	typ := c.queryStr("type", "")
	execs := append([]*execution(nil), s.data.execs...)
	sort.SliceStable(execs, func(i, j int) bool { return execs[i].Start > execs[j].Start })
	out := []any{}
	for _, e := range execs {
		if typ != "" && e.Type != typ {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, s.data.executionListItem(e))
	}
	return okReply(out)
}

func (s *Sim) hActive(c *call) *reply {
	ids := []any{}
	for _, e := range s.data.running() {
		ids = append(ids, e.ID)
	}
	return okReply(o("active_ids", ids))
}

func (s *Sim) hExecution(c *call) *reply {
	if rep := s.checkExpected(c); rep != nil {
		return rep
	}
	e := s.data.execution(c.id)
	if e == nil {
		return detailReply(404, "Execution not found")
	}
	body := s.data.executionRow(e)
	if !s.opts.NoIdentity {
		body = append(body, kv{"identity", s.identity(c)})
	}
	body = append(body, s.data.executionTail(e)...)
	into := []any{}
	for _, x := range s.data.execs {
		if x.RestartedFrom == e.ID {
			into = append(into, x.ID)
		}
	}
	return okReply(append(body, kv{"restarted_into", into}))
}

func (s *Sim) hReferences(c *call) *reply {
	onlyNew, e1 := c.queryBool("only_new")
	includeIDs, e2 := c.queryBool("include_ids")
	if rep := queryValidation(e1, e2); rep != nil {
		return rep
	}
	e := s.data.execution(c.id)
	if e == nil {
		return detailReply(404, "Execution not found")
	}
	format := strings.ToLower(strings.TrimSpace(c.queryStr("format", "bibtex")))
	if _, ok := exportFormats[format]; !ok {
		return detailReply(400, fmt.Sprintf(unknownFormatMsg, c.queryStr("format", "bibtex")))
	}
	if includeIDs && format != "json" {
		return detailReply(400, "include_ids requires the json format")
	}
	ids, stem := e.Docs, fmt.Sprintf("resmon-execution-%d", e.ID)
	if onlyNew {
		ids, stem = e.NewDocs, stem+"-new"
	}
	return exportReply(s.data.docsByID(ids), format, stem, includeIDs)
}

func (c *corpus) docsByID(ids []int) []*document {
	docs := []*document{}
	for _, id := range ids {
		if d := c.doc(id); d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

func (s *Sim) hExportReferences(c *call) *reply {
	f, _, rep := c.validBody(exportReferencesBody)
	if rep != nil {
		return rep
	}
	docIDs, format := f.ints("document_ids"), f.str("format")
	execIDs, hasExec := f.ints("execution_ids"), f["execution_ids"] != nil
	if len(docIDs) > 0 && hasExec {
		return detailReply(400, "Choose document_ids or execution_ids, not both")
	}
	fmtName := strings.ToLower(strings.TrimSpace(format))
	if _, ok := exportFormats[fmtName]; !ok {
		return detailReply(400, fmt.Sprintf(unknownFormatMsg, format))
	}
	ids := docIDs
	if hasExec {
		ids = nil
		seen := map[int]bool{}
		for _, id := range execIDs {
			e := s.data.execution(id)
			if e == nil {
				return detailReply(404, fmt.Sprintf("Execution %d not found", id))
			}
			for _, d := range e.Docs {
				if !seen[d] {
					seen[d] = true
					ids = append(ids, d)
				}
			}
		}
	}
	return exportReply(s.data.docsByID(ids), fmtName, "resmon-selection", false)
}

func (s *Sim) hReport(c *call) *reply {
	e := s.data.execution(c.id)
	if e == nil || e.ResultPath == "" || e.Status != "completed" {
		return detailReply(404, "Report not found")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# resmon report — execution %d\n\n", e.ID)
	fmt.Fprintf(&b, "Query: %s\n\n%d results (%d new).\n\n", paramQuery(e.Params), e.ResultCount, e.NewCount)
	for _, d := range s.data.docsByID(e.Docs) {
		fmt.Fprintf(&b, "- %s — %s (%s)\n", d.Title, d.Authors, d.Source)
	}
	return okReply(o("report_text", b.String()))
}

func (c *corpus) deliveryJSON(d *delivery) obj {
	return o("id", d.ID, "execution_id", d.ExecutionID, "target_id", d.TargetID, "channel", d.Channel,
		"target_snapshot", d.Snapshot, "state", d.State, "attempts", d.Attempts, "next_attempt_at_utc", nil,
		"last_error", ns(d.LastError), "artifact_sha256", nil, "owner_pid", nil, "owner_runtime_id", nil,
		"queued_at_utc", d.Queued, "delivered_at_utc", ns(d.Delivered))
}

func (s *Sim) hExecDeliveries(c *call) *reply {
	if s.data.execution(c.id) == nil {
		return detailReply(404, "Execution not found")
	}
	out := []any{}
	for _, d := range s.data.deliveries {
		if d.ExecutionID == c.id {
			out = append(out, s.data.deliveryJSON(d))
		}
	}
	return okReply(o("execution_id", c.id, "deliveries", out))
}

func (s *Sim) hCancel(c *call) *reply {
	e := s.data.execution(c.id)
	if e == nil {
		return detailReply(409, fmt.Sprintf("resmon has no record of execution %d.", c.id))
	}
	if e.Status != "running" {
		return detailReply(409, fmt.Sprintf("Execution %d is %s; only a running execution can be cancelled.", e.ID, e.Status))
	}
	e.Status, e.CancelReason, e.CurrentStage = "cancelled", "user", "cancelled"
	e.End = c.now.UTC().Format(isoZ)
	return okReply(o("status", "cancellation_requested"))
}

// ---- starting runs ----

func (s *Sim) maxConcurrent() int {
	if n, err := strconv.Atoi(s.data.settings["max_concurrent_executions"]); err == nil && n > 0 {
		return n
	}
	return 3
}

func (s *Sim) capReply() *reply {
	rep := detailReply(429, fmt.Sprintf("resmon is already running the maximum of %d concurrent executions. Wait for one to finish or raise the limit in Settings → Advanced.", s.maxConcurrent()))
	rep.headers = append(rep.headers, [2]string{"Retry-After", "5"})
	return rep
}

func (s *Sim) atCap() bool { return len(s.data.running()) >= s.maxConcurrent() }

func (s *Sim) duplicate(reqID string) *execution {
	if reqID == "" {
		return nil
	}
	for _, e := range s.data.execs {
		if e.RequestID == reqID {
			return e
		}
	}
	return nil
}

// startRun records a new running execution owned by the answering instance.
func (s *Sim) startRun(c *call, typ string, routineID int, params obj, reqID string, ai bool) *execution {
	e := s.data.addExec(&execution{Type: typ, RoutineID: routineID, Params: params, Start: c.now.UTC().Format(isoZ),
		Status: "running", CurrentStage: "querying sources", OwnerPID: os.Getpid(), OwnerRuntimeID: c.inst.runtimeID,
		LastSeen: c.now.UTC().Format(isoUTC), RequestID: reqID, AIEnabled: ai, started: c.now})
	e.LogPath = fmt.Sprintf("/home/resmon/.local/share/resmon/logs/exec_%d.log", e.ID)
	return e
}

// sweepRequestParams is what a sweep or dive stores as its execution's parameters (MIRROR
// prepare_execution: the request's query fields plus the repositories).
func sweepRequestParams(f fields, repoKey string) obj {
	return o("query", f.str("query"), "keywords", nullable(f, "keywords"), "date_from", nullable(f, "date_from"),
		"date_to", nullable(f, "date_to"), "max_results", f.integer("max_results"), repoKey, repoValue(f, repoKey))
}

// nullable is a validated Optional field's value for storage: null when absent or null.
func nullable(f fields, k string) any {
	switch v := f[k].(type) {
	case []string:
		return strSlice(v)
	default:
		return v
	}
}

func repoValue(f fields, k string) any {
	if l, ok := f[k].([]string); ok {
		return strSlice(l)
	}
	return f.str(k)
}

func (s *Sim) hSweep(c *call) *reply { return s.submit(c, false) }
func (s *Sim) hDive(c *call) *reply  { return s.submit(c, true) }

func (s *Sim) submit(c *call, dive bool) *reply {
	m, repoKey := sweepRequest, "repositories"
	if dive {
		m, repoKey = diveRequest, "repository"
	}
	f, _, rep := c.validBody(m)
	if rep != nil {
		return rep
	}
	params, reqID, ai := sweepRequestParams(f, repoKey), f.str("request_id"), f.flag("ai_enabled")
	if e := s.duplicate(reqID); e != nil {
		return okReply(o("execution_id", e.ID, "duplicate", true))
	}
	if s.atCap() {
		return s.capReply()
	}
	typ := "deep_sweep"
	if dive {
		typ = "deep_dive"
	}
	e := s.startRun(c, typ, 0, params, reqID, ai)
	return okReply(o("execution_id", e.ID))
}

func (s *Sim) hRestartExec(c *call) *reply {
	var reqID string
	if len(strings.TrimSpace(string(c.body))) > 0 { // the body is optional here
		f, _, rep := c.validBody(restartBody)
		if rep != nil {
			return rep
		}
		reqID = f.str("request_id")
	}
	if e := s.duplicate(reqID); e != nil {
		return jsonReply(202, o("execution_id", e.ID, "restarted_from", nz(e.RestartedFrom), "ai_enabled", e.AIEnabled, "duplicate", true))
	}
	src := s.data.execution(c.id)
	if src == nil {
		return detailReply(404, "Execution not found")
	}
	if src.Status != "interrupted" && src.Status != "failed" && src.Status != "cancelled" {
		return detailReply(409, fmt.Sprintf("Execution %d is %s; only an interrupted, failed or cancelled run can be restarted.", src.ID, src.Status))
	}
	if s.atCap() {
		return s.capReply()
	}
	e := s.startRun(c, src.Type, src.RoutineID, src.Params, reqID, src.AIEnabled)
	e.RestartedFrom = src.ID
	return jsonReply(202, o("execution_id", e.ID, "restarted_from", src.ID, "ai_enabled", e.AIEnabled))
}
