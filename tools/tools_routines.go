package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/internal/lazyre"
)

// Routine tools: list_routines, get_routine, create_routine, run_routine,
// activate_routine, deactivate_routine.

func toolListRoutines(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	activeOnly, _ := flagArg(args, "active_only")
	limit, offset := limitArg(args), OffsetArg(args)
	res, err := callGet(ctx, api, "/api/routines", nil)
	if err != nil {
		return nil, err
	}
	all, terr := replyList(res, "a list of routines")
	if terr == nil {
		terr = rowsHolding(all, "a list of routines", "id", "is_active") // never an invented "not active"
	}
	if terr != nil {
		return nil, terr
	}
	rows := make([]any, 0, len(all))
	for _, row := range all {
		r := ValMap(row)
		if activeOnly && !pyTruthy(r["is_active"]) {
			continue
		}
		sources, keywords := routineTerms(r["parameters"])
		rows = append(rows, map[string]any{
			"id":           r["id"],
			"name":         r["name"],
			"schedule":     r["schedule_cron"],
			"active":       pyTruthy(r["is_active"]),
			"last_run":     r["last_executed_at"],
			"last_status":  r["last_status"],
			"sources":      sources,
			"keywords":     keywords,
			"missed_fires": r["missed_fires"],
		})
	}
	pg := pageRows(rows, offset, limit)
	return map[string]any{"routines": pg, "count": len(pg), "total": len(rows)}, nil
}

// routineTerms reads sources and keywords out of a routine's parameters, which the backend
// stores and returns as a JSON string. keywords falls back to [query], as the backend's own
// execution list does.
func routineTerms(params any) (sources, keywords any) {
	p := ValMap(params)
	if s, ok := params.(string); ok {
		var parsed map[string]any
		if json.Unmarshal([]byte(s), &parsed) == nil {
			p = parsed
		}
	}
	if p == nil {
		return nil, nil
	}
	if l := ValList(p["repositories"]); l != nil {
		sources = l
	} else if s, ok := p["repository"].(string); ok && s != "" {
		sources = []any{s}
	}
	if l := ValList(p["keywords"]); l != nil {
		keywords = l
	} else if q, ok := p["query"].(string); ok && q != "" {
		keywords = []any{q}
	}
	return sources, keywords
}

func toolGetRoutine(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	id, terr := intArg(args, "routine_id")
	if terr != nil {
		return nil, terr
	}
	res, err := callGet(ctx, api, idPath("/api/routines/%d", id), nil)
	if err != nil {
		return nil, err
	}
	routine, terr := replyObject(res, "a routine", "id")
	if terr != nil {
		return nil, terr
	}
	// The coverage audit is an extra: when it cannot be had, the routine still is.
	if cov, err := callGet(ctx, api, idPath("/api/routines/%d/coverage", id), nil); err == nil && ValMap(cov)["summary"] != nil {
		c := ValMap(cov)
		// A missing lower-bound flag is unknown (null), not "exact": "63" and "at least 63"
		// are different facts.
		var lowerBound any
		if v, ok := c["missed_in_corpus_total_is_lower_bound"]; ok && v != nil {
			lowerBound = pyTruthy(v)
		}
		routine["coverage"] = map[string]any{
			"summary":                               c["summary"],
			"intent":                                c["intent"],
			"intent_source":                         c["intent_source"],
			"results":                               c["results"],
			"results_embedded":                      c["results_embedded"],
			"off_target_count":                      c["off_target_total"],
			"missed_in_corpus_count":                c["missed_in_corpus_total"],
			"missed_in_corpus_count_is_lower_bound": lowerBound,
			"reason":                                c["reason"],
			"cannot_see":                            c["cannot_see"],
		}
	}
	dl, err := callGet(ctx, api, idPath("/api/routines/%d/deliveries", id), nil)
	switch {
	case err == nil:
		// Zero destinations made up from a reply without a summary would be a false fact.
		d, terr := replyObject(dl, "a routine's delivery summary", "summary")
		if terr != nil {
			return nil, terr
		}
		if _, terr := replyObject(d["summary"], "a routine's delivery summary"); terr != nil {
			return nil, terr
		}
		routine["delivery"] = deliverySummary(d)
	case routeMissing(err):
		// A backend too old for deliveries: no key, rather than a claim of zero destinations.
	default:
		return nil, err
	}
	return routine, nil
}

// routeMissing reports a framework-level "no such route" answer (404 Not Found or 405),
// as opposed to a route that answered 404 about the routine itself.
func routeMissing(err error) bool {
	te := asToolError(err)
	if te == nil {
		return false
	}
	return (te.Code == backend.CodeNotFound && te.Message == "Not Found") || te.Message == "Method Not Allowed"
}

// deliverySummary keeps counts and states only. target_snapshot and the delivery rows are
// never copied: where a person sends their research is not the transcript's business.
func deliverySummary(body map[string]any) map[string]any {
	sum := ValMap(body["summary"])
	byChannel := map[string]any{}
	for ch, n := range ValMap(sum["targets"]) {
		if _, ok := valInt(n); ok {
			byChannel[ch] = n
		}
	}
	out := map[string]any{
		"targets_by_channel":    byChannel,
		"enabled_target_count":  numberOrNull(sum["enabled_target_count"]),
		"awaiting_review":       numberOrNull(sum["awaiting_review"]),
		"last_state":            nil,
		"last_channel":          nil,
		"last_attempts":         nil,
		"last_error":            nil,
		"last_delivered_at_utc": nil,
	}
	if last := ValMap(sum["last"]); last != nil {
		out["last_state"] = last["state"]
		out["last_channel"] = last["channel"]
		out["last_attempts"] = last["attempts"]
		if s, ok := last["last_error"].(string); ok {
			out["last_error"] = redactDestinations(s)
		}
		out["last_delivered_at_utc"] = last["delivered_at_utc"]
	}
	return out
}

// numberOrNull is a count the reply holds, or null (unknown) when it holds none: a 0 made
// up for it would say "no destinations".
func numberOrNull(v any) any {
	if _, ok := valInt(v); ok {
		return v
	}
	return nil
}

// Second layer behind the backend's own stripping of last_error: anything shaped like a URL,
// an email address or a filesystem path is replaced.
var (
	urlShape   = lazyre.New(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>]+`)
	emailShape = lazyre.New(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	pathShape  = lazyre.New(`(?:~|\b[A-Za-z]:)?(?:[/\\][^\s/\\"'<>:]+){2,}[/\\]?|~[/\\][^\s"'<>]+`)
)

func redactDestinations(s string) string {
	s = urlShape().ReplaceAllString(s, "<url>")
	s = emailShape().ReplaceAllString(s, "<address>")
	return pathShape().ReplaceAllString(s, "<target>")
}

const createdInactive = "Created inactive. Activate it — in resmon, or by asking to turn it on — to put it on its schedule."

// createdButActive is said when the routine was sent inactive but resmon's record of it is
// active: the reply, not what was sent, is the fact.
const createdButActive = "Created. It was sent inactive, but resmon's record shows it active, so it is on its schedule; deactivate_routine takes it off."

func toolCreateRoutine(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	name, terr := requiredStringArg(args, "name")
	if terr != nil {
		return nil, terr
	}
	keywords, terr := requiredStringListArg(args, "keywords")
	if terr != nil {
		return nil, terr
	}
	sources, terr := requiredStringListArg(args, "sources")
	if terr != nil {
		return nil, terr
	}
	schedule, terr := requiredStringArg(args, "schedule")
	if terr != nil {
		return nil, terr
	}
	aiEnabled, _ := flagArg(args, "ai_enabled")
	params := map[string]any{"query": strings.Join(keywords, " "), "repositories": sources}
	// entity goes to the backend unexamined: its validator also governs the app's own editor,
	// and two validators for one rule drift apart.
	if e, ok := args["entity"]; ok && e != nil {
		params["entity"] = e
	}
	body := map[string]any{
		"name":          name,
		"schedule_cron": schedule,
		"parameters":    params,
		"is_active":     false, // scheduling is the person's decision, not a side effect
		"ai_enabled":    aiEnabled,
	}
	// Never defaulted from the keywords: a routine measured against its own keywords is
	// measured against itself.
	if intent := strings.TrimSpace(stringArg(args, "intent")); intent != "" {
		body["intent"] = intent
	}
	res, err := callPost(ctx, api, "/api/routines", body, true)
	if err != nil {
		return nil, err
	}
	created, terr := writeReply(res, "the created routine", "id")
	if terr != nil {
		return nil, terr
	}
	record := res
	if id, ok := valInt(created["id"]); ok {
		// POST answers {id, name}; read the record back so is_active:false is a visible fact.
		if full, err := callGet(ctx, api, idPath("/api/routines/%d", id), nil); err == nil && ValMap(full)["id"] != nil {
			record = full
		}
	}
	detail := createdInactive
	if v, ok := ValMap(record)["is_active"]; ok && pyTruthy(v) {
		// Sent inactive, but the record read back says otherwise: say what it shows.
		detail = createdButActive
	}
	out := map[string]any{"routine": record, "detail": detail}
	if w, ok := created["entity_warning"].(string); ok && w != "" {
		out["entity_warning"] = w
		out["detail"] = detail + " " + w
	}
	return out, nil
}

// alreadyRunningAs finds the execution id in the backend's sentence
// "This routine is already running as execution {id}. …".
var alreadyRunningAs = lazyre.New(`already running as execution (\d+)`)

func toolRunRoutine(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	id, terr := intArg(args, "routine_id")
	if terr != nil {
		return nil, terr
	}
	res, err := callPost(ctx, api, idPath("/api/routines/%d/run", id), nil, true)
	if err != nil {
		return nil, runConflict(err)
	}
	run, terr := writeReply(res, "a started routine run", "execution_id")
	if terr != nil {
		return nil, terr
	}
	if _, terr := integerField(run, "execution_id", "a started routine run", true); terr != nil {
		return nil, terr
	}
	return run, nil
}

// runConflict gives the "routine already running" 409 its contract shape, naming the running
// execution so a harness can poll it instead of retrying. The client surfaces the backend's
// X-Resmon-Conflict / X-Resmon-Execution-Id headers in Detail; without them (an older
// backend, or a header with no id) the id is read from the backend's sentence. Other
// conflicts (admission refusals, 429s) pass unchanged.
func runConflict(err error) error {
	te := asToolError(err)
	if te == nil || te.Code != backend.CodeConflict {
		return err
	}
	m := alreadyRunningAs().FindStringSubmatch(te.Message)
	if te.Detail["conflict"] != "routine_already_running" && m == nil &&
		!strings.Contains(te.Message, "routine is already running") {
		return err
	}
	var execID any
	if n, ok := valInt(te.Detail["execution_id"]); ok {
		execID = n
	} else if m != nil {
		if n, e := strconv.ParseInt(m[1], 10, 64); e == nil {
			execID = n
		}
	}
	out := backend.NewError(backend.CodeConflict, te.Message, map[string]any{
		"conflict":     "routine_already_running",
		"execution_id": execID,
	})
	out.Sent, out.BackendGone = te.Sent, te.BackendGone
	return out
}

// routineToggle builds activate_routine / deactivate_routine: one POST, body passed through.
func routineToggle(action string) Handler {
	return func(ctx context.Context, api backend.API, args map[string]any) (any, error) {
		id, terr := intArg(args, "routine_id")
		if terr != nil {
			return nil, terr
		}
		res, err := callPost(ctx, api, idPath("/api/routines/%d/"+action, id), nil, true)
		if err != nil {
			return nil, err
		}
		state, terr := writeReply(res, "the routine's new schedule state", "id", "is_active")
		if terr != nil {
			return nil, terr
		}
		return state, nil
	}
}
