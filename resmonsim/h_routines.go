package resmonsim

import (
	"fmt"
	"sort"
	"strings"
)

const msgRoutineNotFound = "Routine not found"

func jsonText(v any) any {
	if v == nil {
		return nil
	}
	return pyDumps(v)
}

// routineRow is the stored row (§5.3): flags as 0/1, JSON columns as strings.
func routineRow(r *routine, boolFlags bool) obj {
	flag := func(b bool) any {
		if boolFlags {
			return b
		}
		return b01(b)
	}
	return o("id", r.ID, "name", r.Name, "schedule_cron", r.Cron, "parameters", pyDumps(r.Params),
		"is_active", flag(r.IsActive), "email_enabled", flag(r.EmailEnabled), "email_ai_summary_enabled", flag(r.EmailAISum),
		"ai_enabled", flag(r.AIEnabled), "notify_on_complete", flag(r.NotifyOnComplete),
		"ai_settings", jsonText(r.AISettings), "storage_settings", jsonText(r.StorageSettings), "intent", ns(r.Intent),
		"execution_location", "local", "created_at", r.CreatedAt, "updated_at", r.UpdatedAt, "last_executed_at", ns(r.LastExecutedAt))
}

func missedSummary(r *routine) obj {
	n, last := 0, ""
	for _, m := range r.Missed {
		if m.Disp == "recorded" {
			n++
			if m.DueAt > last {
				last = m.DueAt
			}
		}
	}
	return o("count", n, "last_due_at_utc", ns(last))
}

func (c *corpus) lastStatus(routineID int) any {
	var best *execution
	for _, e := range c.execs {
		if e.RoutineID == routineID && (best == nil || e.Start >= best.Start) {
			best = e
		}
	}
	if best == nil {
		return nil
	}
	return best.Status
}

func (c *corpus) routineDetail(r *routine) obj {
	details := []any{}
	ms := append([]*missedFire(nil), r.Missed...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].DueAt < ms[j].DueAt })
	for _, m := range ms {
		details = append(details, o("id", m.ID, "routine_id", m.RoutineID, "due_at_utc", m.DueAt,
			"observed_at_utc", m.ObservedAt, "disposition", m.Disp))
	}
	return append(routineRow(r, true), kv{"missed_fires", missedSummary(r)}, kv{"missed_fire_details", details})
}

func (s *Sim) hRoutines(c *call) *reply {
	rs := append([]*routine(nil), s.data.routines...)
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].CreatedAt != rs[j].CreatedAt {
			return rs[i].CreatedAt > rs[j].CreatedAt
		}
		return rs[i].ID > rs[j].ID
	})
	out := []any{}
	for _, r := range rs {
		out = append(out, append(routineRow(r, false), kv{"last_execution", ns(r.LastExecutedAt)},
			kv{"last_status", s.data.lastStatus(r.ID)}, kv{"missed_fires", missedSummary(r)}))
	}
	return okReply(out)
}

func (s *Sim) hRoutine(c *call) *reply {
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	return okReply(s.data.routineDetail(r))
}

// authorSearchSources can be asked about an author (the catalog's entity_search).
var authorSearchSources = map[string]bool{"arxiv": true, "crossref": true, "dblp": true, "europepmc": true,
	"inspire_hep": true, "nasa_ads": true, "openalex": true, "pubmed": true, "semantic_scholar": true}

const entityWarning = "None of the sources this routine names can be asked about an author, so it will find nothing until you add one that can. Each run will say so on the source's row."

// validateEntity normalises parameters.entity, or returns the 400 sentence.
func (c *corpus) validateEntity(v any) (obj, string) {
	e, ok := v.(obj)
	if !ok {
		return nil, "entity must be an object with 'mode' and 'profile_id'."
	}
	modeV, _ := e.get("mode")
	mode, _ := modeV.(string)
	mode = strings.ToLower(strings.TrimSpace(mode))
	if mode != "new_papers" && mode != "retractions" {
		return nil, "entity.mode must be 'new_papers' or 'retractions'."
	}
	pidV, _ := e.get("profile_id")
	pid, ok := asInt(pidV)
	if !ok {
		return nil, "entity.profile_id must be a whole number."
	}
	if c.profile(pid) == nil {
		return nil, "That profile does not exist."
	}
	return o("mode", mode, "profile_id", pid), ""
}

type routineFields struct {
	set                 map[string]bool
	name, cron, intent  string
	params              obj
	aiSettings, storage any
	flags               map[string]bool
}

var routineFlagKeys = []string{"is_active", "email_enabled", "email_ai_summary_enabled", "ai_enabled", "notify_on_complete"}

// readRoutineBody validates RoutineCreate (create=true) or RoutineUpdate. set names the
// fields the body gave (for an update, only those change; a null one is cleared).
func readRoutineBody(c *call, create bool) (*routineFields, *reply) {
	m := routineUpdate()
	if create {
		m = routineCreate()
	}
	v, given, rep := c.validBody(m)
	if rep != nil {
		return nil, rep
	}
	f := &routineFields{set: given, flags: map[string]bool{}, name: v.str("name"), cron: v.str("schedule_cron"),
		intent: v.str("intent"), params: v.object("parameters"), aiSettings: v["ai_settings"], storage: v["storage_settings"]}
	if create { // the defaults apply on creation only
		f.set = map[string]bool{}
		for k := range v {
			f.set[k] = true
		}
	}
	for _, k := range routineFlagKeys {
		if b, ok := v[k].(bool); ok {
			f.flags[k] = b
		} else {
			delete(f.set, k) // null in an update: nothing to change
		}
	}
	return f, nil
}

func (s *Sim) hCreateRoutine(c *call) *reply {
	f, rep := readRoutineBody(c, true)
	if rep != nil {
		return rep
	}
	var entity obj
	if ev, ok := f.params.get("entity"); ok {
		var msg string
		if entity, msg = s.data.validateEntity(ev); msg != "" {
			return detailReply(400, msg)
		}
		f.params = f.params.set("entity", entity)
	}
	active := true
	if v, ok := f.flags["is_active"]; ok {
		active = v
	}
	now := c.now.UTC().Format(sqlTime)
	r := &routine{Name: f.name, Cron: f.cron, Params: f.params, IsActive: active, EmailEnabled: f.flags["email_enabled"],
		EmailAISum: f.flags["email_ai_summary_enabled"], AIEnabled: f.flags["ai_enabled"], NotifyOnComplete: f.flags["notify_on_complete"],
		AISettings: f.aiSettings, StorageSettings: f.storage, CreatedAt: now, UpdatedAt: now}
	if strings.TrimSpace(f.intent) != "" { // a blank intent is stored as null
		r.Intent = f.intent
	}
	s.data.addRoutine(r)
	resp := o("id", r.ID, "name", r.Name)
	if entity != nil {
		resp = append(resp, kv{"entity", entity})
		supported := false
		for _, slug := range paramRepos(f.params) {
			supported = supported || authorSearchSources[slug]
		}
		if !supported {
			resp = append(resp, kv{"entity_warning", entityWarning})
		}
	}
	return jsonReply(201, resp)
}

func (s *Sim) hUpdateRoutine(c *call) *reply {
	f, rep := readRoutineBody(c, false)
	if rep != nil {
		return rep
	}
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	out := o("id", r.ID)
	// Keys follow RoutineUpdate's field order, values in their stored forms.
	for _, k := range []string{"name", "schedule_cron", "parameters", "is_active", "email_enabled", "email_ai_summary_enabled",
		"ai_enabled", "notify_on_complete", "ai_settings", "storage_settings", "intent"} {
		if !f.set[k] {
			continue
		}
		switch k {
		case "name":
			r.Name = f.name
			out = append(out, kv{k, f.name})
		case "schedule_cron":
			r.Cron = f.cron
			out = append(out, kv{k, f.cron})
		case "parameters":
			if ev, ok := f.params.get("entity"); ok {
				entity, msg := s.data.validateEntity(ev)
				if msg != "" {
					return detailReply(400, msg)
				}
				f.params = f.params.set("entity", entity)
			}
			r.Params = f.params
			out = append(out, kv{k, pyDumps(f.params)})
		case "ai_settings":
			r.AISettings = f.aiSettings
			out = append(out, kv{k, jsonText(f.aiSettings)})
		case "storage_settings":
			r.StorageSettings = f.storage
			out = append(out, kv{k, jsonText(f.storage)})
		case "intent":
			r.Intent = strings.TrimSpace(f.intent)
			if r.Intent != "" {
				r.Intent = f.intent
			}
			out = append(out, kv{k, ns(r.Intent)})
		default:
			b := f.flags[k]
			switch k {
			case "is_active":
				r.IsActive = b
			case "email_enabled":
				r.EmailEnabled = b
			case "email_ai_summary_enabled":
				r.EmailAISum = b
			case "ai_enabled":
				r.AIEnabled = b
			case "notify_on_complete":
				r.NotifyOnComplete = b
			}
			out = append(out, kv{k, b01(b)})
		}
	}
	r.UpdatedAt = c.now.UTC().Format(sqlTime)
	return okReply(out)
}

func (s *Sim) hDeleteRoutine(c *call) *reply {
	for i, r := range s.data.routines {
		if r.ID == c.id {
			s.data.routines = append(s.data.routines[:i:i], s.data.routines[i+1:]...)
			return okReply(o("success", true))
		}
	}
	return detailReply(404, msgRoutineNotFound)
}

func (s *Sim) setActive(c *call, active bool) *reply {
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	r.IsActive = active
	r.UpdatedAt = c.now.UTC().Format(sqlTime)
	return okReply(o("id", r.ID, "is_active", active))
}

func (s *Sim) hActivate(c *call) *reply   { return s.setActive(c, true) }
func (s *Sim) hDeactivate(c *call) *reply { return s.setActive(c, false) }

func (s *Sim) hRunRoutine(c *call) *reply {
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	for _, e := range s.data.running() {
		if e.RoutineID == r.ID {
			rep := detailReply(409, fmt.Sprintf("This routine is already running as execution %d. Wait for that run to finish, or cancel it, before starting another.", e.ID))
			rep.headers = append(rep.headers, [2]string{"X-Resmon-Conflict", "routine_already_running"},
				[2]string{"X-Resmon-Execution-Id", fmt.Sprint(e.ID)})
			return rep
		}
	}
	if s.atCap() {
		return detailReply(409, "resmon is already running as many executions as it allows at once. Wait for one to finish and try again.")
	}
	params := append(obj{}, r.Params...)
	if ev, ok := r.Params.get("entity"); ok {
		if ent, isObj := ev.(obj); isObj {
			mode, _ := ent.get("mode")
			pidV, _ := ent.get("profile_id")
			pid, _ := asInt(pidV)
			name := any(nil)
			if p := s.data.profile(pid); p != nil {
				name = p.DisplayName
			}
			params = append(params, kv{"entity_mode", mode}, kv{"entity_profile_id", pid}, kv{"entity_profile", name})
		}
	}
	e := s.startRun(c, "automated_sweep", r.ID, params, "", r.AIEnabled)
	marked := 0
	for _, m := range r.Missed {
		if m.Disp == "recorded" {
			m.Disp = "ran_late"
			marked++
		}
	}
	r.LastExecutedAt = c.now.UTC().Format(sqlTime)
	detail := "Running now, in addition to its schedule."
	if !r.IsActive {
		detail = "This routine is not scheduled; it was run once because you asked for it."
	}
	return okReply(o("execution_id", e.ID, "routine_id", r.ID, "was_inactive", !r.IsActive,
		"missed_fires_marked_ran_late", marked, "detail", detail))
}

func (s *Sim) hRoutineDeliveries(c *call) *reply {
	limit, qe := c.queryInt("limit", 100, nil, nil)
	if qe != nil {
		return validation(*qe)
	}
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	targetOf := map[int]*deliveryTarget{}
	counts := obj{}
	enabled := 0
	for _, t := range s.data.targets {
		if t.RoutineID != r.ID {
			continue
		}
		targetOf[t.ID] = t
		if t.Enabled {
			enabled++
			n, _ := counts.get(t.Channel)
			k, _ := n.(int)
			counts = counts.set(t.Channel, k+1)
		}
	}
	var mine []*delivery
	for _, d := range s.data.deliveries {
		if targetOf[d.TargetID] != nil {
			mine = append(mine, d)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].ID > mine[j].ID })
	list := []any{}
	awaiting := 0
	for i, d := range mine {
		if d.State == "awaiting_review" {
			awaiting++
		}
		if limit <= 0 || i < limit {
			list = append(list, s.data.deliveryJSON(d))
		}
	}
	var last any
	if len(mine) > 0 {
		d := mine[0]
		last = o("id", d.ID, "execution_id", d.ExecutionID, "channel", d.Channel, "state", d.State,
			"attempts", d.Attempts, "last_error", ns(d.LastError), "delivered_at_utc", ns(d.Delivered))
	}
	return okReply(o("routine_id", r.ID, "deliveries", list, "summary",
		o("targets", counts, "enabled_target_count", enabled, "awaiting_review", awaiting, "last", last)))
}

// hRoutineCoverage is the intent audit get_routine summarises. Its exact 2.3 shape was not
// read (spec gap); the keys are those the reference MCP server consumes, plus the two lists.
func (s *Sim) hRoutineCoverage(c *call) *reply {
	r := s.data.routine(c.id)
	if r == nil {
		return detailReply(404, msgRoutineNotFound)
	}
	intent, source := r.Intent, "intent"
	if intent == "" {
		intent, source = paramQuery(r.Params), "keywords"
		if kw, ok := r.Params.get("keywords"); ok {
			if l, ok := kw.([]any); ok && len(l) > 0 {
				parts := make([]string, 0, len(l))
				for _, x := range l {
					parts = append(parts, fmt.Sprint(x))
				}
				intent = strings.Join(parts, " ")
			}
		}
	}
	seen := map[int]bool{}
	var results []*document
	for _, e := range s.data.execs {
		if e.RoutineID != r.ID {
			continue
		}
		for _, id := range e.Docs {
			if !seen[id] {
				seen[id] = true
				results = append(results, s.data.doc(id))
			}
		}
	}
	embedded := 0
	offTarget, missed := []any{}, []any{}
	offTotal, missedTotal := 0, 0
	it := tokens(intent)
	for _, d := range results {
		if !docEmbedded(d) {
			continue
		}
		embedded++
		if dist := distance(it, tokens(d.Title+" "+d.Abstract)); dist > 0.9 {
			offTotal++
			if len(offTarget) < 25 {
				offTarget = append(offTarget, o("document_id", d.ID, "title", d.Title, "distance", round(dist, 4)))
			}
		}
	}
	for _, d := range s.data.docs {
		if seen[d.ID] || !docEmbedded(d) {
			continue
		}
		if dist := distance(it, tokens(d.Title+" "+d.Abstract)); dist < 0.8 {
			missedTotal++
			if len(missed) < 25 {
				missed = append(missed, o("document_id", d.ID, "title", d.Title, "distance", round(dist, 4)))
			}
		}
	}
	var reason any
	summary := fmt.Sprintf("%d of %d results are far from the %s; %d papers already in the corpus look on-target but were not found by this routine.",
		offTotal, len(results), map[string]string{"intent": "routine's intent", "keywords": "routine's keywords"}[source], missedTotal)
	if len(results) == 0 {
		reason = "This routine has no results yet, so there is nothing to compare against its intent."
		summary = "No results to audit yet."
	}
	return okReply(o("routine_id", r.ID, "summary", summary, "intent", ns(intent), "intent_source", source,
		"results", len(results), "results_embedded", embedded,
		"off_target", offTarget, "off_target_total", offTotal,
		"missed_in_corpus", missed, "missed_in_corpus_total", missedTotal, "missed_in_corpus_total_is_lower_bound", missedTotal >= 25,
		"reason", reason,
		"cannot_see", []any{"resmon compares titles and abstracts by meaning; it cannot read full texts.",
			"Papers the sources never returned are invisible to this audit unless they are already in the corpus."}))
}
