package tools

import (
	"context"
	"net/url"
	"strconv"

	"github.com/resmongw/resmongw/backend"
)

// Corpus tools: search_corpus, find_similar, explain_match, get_paper_lifecycle,
// export_references.

// compactPaper is the reference's paper shape: a handful of fields instead of the stored
// row (abstracts and hashes would cost a harness tokens for nothing).
func compactPaper(row any) map[string]any {
	r := ValMap(row)
	return map[string]any{
		"id":      r["id"],
		"title":   r["title"],
		"authors": r["authors"],
		"date":    r["publication_date"],
		"source":  r["source_repository"],
		"doi":     r["doi"],
		"url":     r["url"],
	}
}

const offsetRefusal = "The corpus paginates by cursor, not offset. Pass the 'next_cursor' from the previous call as 'cursor'."

const noSemanticRanking = "This resmon cannot rank by meaning; the results are newest first."

func toolSearchCorpus(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	// An offset would have to re-walk every earlier page: any offset the reference would
	// call true is refused (0, false, "" and null are let by, as there).
	if pyTruthy(args["offset"]) {
		return nil, backend.InvalidArgument(offsetRefusal)
	}
	mode := stringArg(args, "mode") // the schema's enum, exactly
	if mode == "" {
		mode = "keyword"
	}
	query, terr := requiredStringArg(args, "query")
	if terr != nil {
		return nil, terr
	}
	sources := stringListArg(args, "sources")
	sort := "newest"
	if mode == "semantic" {
		sort = "similarity"
	}
	body := map[string]any{"query": query, "limit": limitArg(args), "sort": sort}
	if c := stringArg(args, "cursor"); c != "" {
		body["cursor"] = c
	}
	if len(sources) > 0 {
		body["sources"] = sources
	}
	for _, k := range []string{"date_from", "date_to"} {
		if v := stringArg(args, k); v != "" {
			body[k] = v
		}
	}
	res, err := callPost(ctx, api, "/api/explorer/search", body, false)
	if err != nil {
		return nil, err
	}
	// sort says which order was served: without it, "keyword" (or "cannot rank by meaning")
	// would be a made-up fact.
	r, rows, terr := objectWithRows(res, "a page of search results", "results", "sort")
	if terr == nil {
		terr = rowsHolding(rows, "a page of search results", "id")
	}
	if terr != nil {
		return nil, terr
	}
	served := "keyword"
	if r["sort"] == "similarity" {
		served = "semantic"
	}
	papers := make([]any, 0, len(rows))
	for _, row := range rows {
		p := compactPaper(row)
		if served == "semantic" {
			p["distance"] = ValMap(row)["distance"]
		}
		papers = append(papers, p)
	}
	out := map[string]any{
		"papers":          papers,
		"count":           len(papers),
		"next_cursor":     r["next_cursor"],
		"has_more":        r["has_more"],
		"total":           r["total"],
		"total_is_capped": r["total_is_capped"],
		"mode":            served,
	}
	if served == "semantic" {
		out["ranked_count"] = r["ranked_count"]
		out["unranked_count"] = r["unranked_count"]
		out["model"] = r["model"]
	} else if mode == "semantic" {
		// Told it got a ranking it did not get, a harness would present a chronology as relevance.
		reason, _ := r["similarity_unavailable"].(string)
		if reason == "" {
			reason = noSemanticRanking
		}
		out["mode_unavailable"] = reason
	}
	return out, nil
}

func toolFindSimilar(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	docID, terr := intArg(args, "doc_id")
	if terr != nil {
		return nil, terr
	}
	q := url.Values{"k": {strconv.Itoa(limitArg(args))}}
	res, err := callGet(ctx, api, idPath("/api/documents/%d/similar", docID), q)
	if err != nil {
		return nil, err
	}
	r, rows, terr := objectWithRows(res, "a list of similar papers", "neighbours")
	if terr == nil {
		terr = rowsHolding(rows, "a list of similar papers", "id")
	}
	if terr != nil {
		return nil, terr
	}
	papers := make([]any, 0, len(rows))
	for _, row := range rows {
		p := compactPaper(row)
		p["distance"] = ValMap(row)["distance"]
		papers = append(papers, p)
	}
	docOut := r["document_id"]
	if docOut == nil {
		docOut = docID
	}
	return map[string]any{
		"document_id": docOut,
		"model":       r["model"],
		"papers":      papers,
		"count":       len(papers),
		"reason":      r["reason"],
	}, nil
}

// passthroughByID builds a read tool that GETs one path keyed by an integer argument and
// returns the body unchanged (the caveats in these bodies must reach the harness intact),
// once it is the object it should be: what names it and the key it must hold.
func passthroughByID(key, pathFormat, what, mustHave string) Handler {
	return func(ctx context.Context, api backend.API, args map[string]any) (any, error) {
		id, terr := intArg(args, key)
		if terr != nil {
			return nil, terr
		}
		res, err := callGet(ctx, api, idPath(pathFormat, id), nil)
		if err != nil {
			return nil, err
		}
		if _, terr := replyObject(res, what, mustHave); terr != nil {
			return nil, terr
		}
		return res, nil
	}
}

var (
	toolExplainMatch      = passthroughByID("doc_id", "/api/documents/%d/why", "a match explanation", "verdict")
	toolGetPaperLifecycle = passthroughByID("doc_id", "/api/documents/%d/lifecycle", "a paper's lifecycle", "events")
	toolGetSearchRecord   = passthroughByID("exec_id", "/api/executions/%d/search-record", "a search record", "record_type")
)

func toolExportReferences(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	format := stringArg(args, "format") // one of the schema's enum
	if format == "" {
		format = "bibtex"
	}
	execID, hasExec, terr := optionalIntArg(args, "exec_id")
	if terr != nil {
		return nil, terr
	}
	if hasExec {
		res, err := callGet(ctx, api, idPath("/api/executions/%d/references", execID), url.Values{"format": {format}})
		return exportText(res, err, format)
	}
	raw, _ := arrayItems(args["doc_ids"])
	if len(raw) == 0 {
		return nil, backend.InvalidArgument("Pass either 'exec_id' or 'doc_ids'.")
	}
	ids := make([]int64, 0, len(raw))
	for _, v := range raw {
		n, terr := checkedInt(v, "doc_ids")
		if terr != nil {
			return nil, terr
		}
		ids = append(ids, n)
	}
	res, err := callPost(ctx, api, "/api/export/references", map[string]any{"document_ids": ids, "format": format}, false)
	return exportText(res, err, format)
}

// exportText checks an export is the file asked for: text for bibtex, ris and csv (an empty
// selection is an empty file), a list of references for json.
func exportText(res any, err error, format string) (any, error) {
	if err != nil {
		return nil, err
	}
	switch v := res.(type) {
	case nil:
		if format != "json" {
			return "", nil
		}
	case string:
		if format != "json" && !looksLikeHTML(v) {
			return v, nil
		}
	case []any:
		if format == "json" {
			rows, terr := replyList(v, "a JSON reference export")
			if terr == nil {
				terr = rowsHolding(rows, "a JSON reference export", "title")
			}
			if terr != nil {
				return nil, terr
			}
			return rows, nil
		}
	}
	return nil, wrongShape("a "+format+" reference export", res, false)
}
