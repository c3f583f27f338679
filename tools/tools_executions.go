package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/resmongw/resmongw/backend"
)

// Health and execution tools: health, list_executions, get_execution,
// get_execution_results, run_sweep (get_search_record is a passthrough in tools_corpus.go).

const badRuntimeID = "expected_runtime_id must be a canonical lowercase UUID4"

// defaultSweepResults is run_sweep's per-source cap when max_results is not given (the
// reference's default; the backend's own is 100).
const defaultSweepResults = 50

// expectedRuntimeID reads the optional identity expectation. A key that is present must hold a
// valid id (null and "" included): it is checked before any request is built.
func expectedRuntimeID(args map[string]any) (id string, has bool, terr *backend.ToolError) {
	v, ok := args["expected_runtime_id"]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr || !backend.ValidRuntimeID(s) {
		return "", false, backend.InvalidArgument(badRuntimeID)
	}
	return s, true, nil
}

// identityGet GETs path, bound to an expected runtime when one is given: the expectation
// travels as a query parameter (so the backend refuses before reading anything), marks the
// request so a 409 maps to instance_mismatch, and the reply's own identity is checked too.
func identityGet(ctx context.Context, api backend.API, path, expected string) (any, error) {
	req := &backend.Request{Method: "GET", Path: path}
	if expected != "" {
		req.Query = url.Values{"expected_runtime_id": {expected}}
		req.ExpectedRuntimeID = expected
	}
	body, err := api.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	if expected != "" {
		if te := backend.CheckIdentity(body, expected); te != nil {
			return nil, te // the body is dropped: it came from an instance we did not ask for
		}
	}
	return body, nil
}

func toolHealth(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	expected, _, terr := expectedRuntimeID(args)
	if terr != nil {
		return nil, terr
	}
	res, err := identityGet(ctx, api, "/api/health", expected)
	if err != nil {
		return nil, err
	}
	if _, terr := replyObject(res, "resmon's health", "version"); terr != nil {
		return nil, terr
	}
	return res, nil
}

func toolGetExecution(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	expected, has, terr := expectedRuntimeID(args)
	if terr != nil {
		return nil, terr
	}
	execID, terr := intArg(args, "exec_id")
	if terr != nil {
		return nil, terr
	}
	if has {
		// Preflight: a legacy or different backend is refused before the execution is asked for.
		if _, err := identityGet(ctx, api, "/api/health", expected); err != nil {
			return nil, err
		}
	}
	res, err := identityGet(ctx, api, idPath("/api/executions/%d", execID), expected)
	if err != nil {
		return nil, err
	}
	if _, terr := replyObject(res, "an execution", "id", "status"); terr != nil {
		return nil, terr
	}
	return res, nil
}

// executionsFetchLimit is the backend's maximum page for GET /api/executions. The list has no
// routine or status filter, so the tool filters and pages the most recent rows itself.
const executionsFetchLimit = 500

func toolListExecutions(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	routineID, byRoutine, terr := optionalIntArg(args, "routine_id")
	if terr != nil {
		return nil, terr
	}
	status := stringArg(args, "status")
	limit, offset := limitArg(args), OffsetArg(args)
	res, err := callGet(ctx, api, "/api/executions", url.Values{"limit": {strconv.Itoa(executionsFetchLimit)}})
	if err != nil {
		return nil, err
	}
	all, terr := replyList(res, "a list of executions")
	if terr == nil {
		terr = rowsHolding(all, "a list of executions", "id", "status")
	}
	if terr != nil {
		return nil, terr
	}
	rows := make([]any, 0, len(all))
	for _, row := range all {
		r := ValMap(row)
		if byRoutine {
			if id, ok := valInt(r["routine_id"]); !ok || id != routineID {
				continue
			}
		}
		if status != "" && r["status"] != status {
			continue
		}
		rows = append(rows, map[string]any{
			"id":                 r["id"],
			"type":               r["execution_type"],
			"status":             r["status"],
			"started":            r["start_time"],
			"finished":           r["end_time"],
			"result_count":       r["result_count"],
			"interrupted_reason": r["interrupted_reason"],
			"restarted_from":     r["restarted_from"],
		})
	}
	pg := pageRows(rows, offset, limit)
	return map[string]any{
		"executions": pg,
		"count":      len(pg),
		"total":      len(rows),
		// When the backend's window is full, older runs exist that total does not count.
		"total_is_capped": len(all) >= executionsFetchLimit,
	}, nil
}

func toolGetExecutionResults(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	execID, terr := intArg(args, "exec_id")
	if terr != nil {
		return nil, terr
	}
	limit, offset := limitArg(args), OffsetArg(args)
	q := url.Values{"format": {"json"}, "include_ids": {"true"}}
	res, err := callGet(ctx, api, idPath("/api/executions/%d/references", execID), q)
	if err != nil {
		return nil, err
	}
	// The export is a file body; a client may hand it over undecoded.
	if text, ok := res.(string); ok {
		dec := json.NewDecoder(bytes.NewReader([]byte(text)))
		dec.UseNumber()
		var parsed any
		if err := dec.Decode(&parsed); err != nil {
			return nil, backend.NewError(backend.CodeUpstreamError, "resmon returned a reference export that could not be read.", nil)
		}
		res = parsed
	}
	rows, terr := replyList(res, "an execution's reference export")
	if terr == nil {
		terr = rowsHolding(rows, "an execution's reference export", "id", "title") // asked with include_ids
	}
	if terr != nil {
		return nil, terr
	}
	papers := make([]any, 0, min(limit, len(rows)))
	for _, row := range pageRows(rows, offset, limit) {
		papers = append(papers, compactPaper(row))
	}
	return map[string]any{"papers": papers, "count": len(papers), "total": len(rows)}, nil
}

func toolRunSweep(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	query, terr := requiredStringArg(args, "query")
	if terr != nil {
		return nil, terr
	}
	sources, terr := requiredStringListArg(args, "sources")
	if terr != nil {
		return nil, terr
	}
	// The schema refuses max_results below 1; absent, the reference's 50.
	maxResults := int64(defaultSweepResults)
	if n, ok, terr := optionalIntArg(args, "max_results"); terr != nil {
		return nil, terr
	} else if ok {
		maxResults = n
	}
	body := map[string]any{"query": query, "repositories": sources, "max_results": maxResults}
	for _, k := range []string{"date_from", "date_to"} {
		if v := stringArg(args, k); v != "" {
			body[k] = v
		}
	}
	if v, ok := flagArg(args, "ai_enabled"); ok {
		body["ai_enabled"] = v
	}
	res, err := callPost(ctx, api, "/api/search/sweep", body, true)
	if err != nil {
		return nil, err
	}
	started, terr := writeReply(res, "a started sweep", "execution_id")
	if terr != nil {
		return nil, terr
	}
	id, terr := integerField(started, "execution_id", "a started sweep", true)
	if terr != nil {
		return nil, terr
	}
	return map[string]any{
		"execution_id": id,
		"detail":       "Started. Poll get_execution for progress.",
	}, nil
}
