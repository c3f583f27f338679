package resmonsim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

func docJSON(d *document) obj {
	return o("id", d.ID, "source_repository", d.Source, "external_id", d.ExternalID, "doi", ns(d.DOI), "title", d.Title,
		"authors", d.Authors, "abstract", ns(d.Abstract), "publication_date", ns(d.PublicationDate), "url", ns(d.URL),
		"categories", ns(d.Categories), "metadata_hash", d.MetadataHash, "first_seen_at", d.FirstSeenAt)
}

// ---- deterministic "embeddings": Jaccard distance over word sets ----

func tokens(s string) map[string]bool {
	t := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 2 && w != "for" && w != "the" && w != "and" {
			t[w] = true
		}
	}
	return t
}

func distance(a, b map[string]bool) float64 {
	inter, union := 0, len(b)
	for w := range a {
		if b[w] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 1
	}
	return 1 - float64(inter)/float64(union)
}

// docEmbedded: every thirteenth paper has no vector, so "unembedded" paths are exercised.
func docEmbedded(d *document) bool { return d.ID%13 != 0 }

func docText(d *document) map[string]bool { return tokens(d.Title + " " + d.Abstract) }

// ---- explorer ----

// explorerQuery is a validated ExplorerSearchBody.
type explorerQuery struct {
	query, sort, cursor          string
	limit                        int
	sources, authors, categories []string
	dateFrom, dateTo             string
}

func (s *Sim) hExplorerSearch(c *call) *reply {
	f, _, rep := c.validBody(explorerSearchBody)
	if rep != nil {
		return rep
	}
	q := explorerQuery{query: strings.TrimSpace(f.str("query")), sort: f.str("sort"), cursor: f.str("cursor"),
		limit: min(max(f.integer("limit"), 1), 200), sources: f.strs("sources"), authors: f.strs("authors"),
		categories: f.strs("categories"), dateFrom: f.str("date_from"), dateTo: f.str("date_to")}
	filtered := s.filterDocs(q)
	if q.sort == "similarity" {
		if rep := s.similarityPage(filtered, q.query, q.cursor, q.limit); rep != nil {
			return rep
		}
	}
	return s.newestPage(filtered, q)
}

// filterDocs applies the structured filters, which hold in both modes.
func (s *Sim) filterDocs(q explorerQuery) []*document {
	filtered := []*document{}
	for _, d := range s.data.docs {
		if len(q.sources) > 0 && !contains(q.sources, d.Source) {
			continue
		}
		if len(q.authors) > 0 && !anyIn(splitAuthors(d.Authors), q.authors) {
			continue
		}
		if len(q.categories) > 0 && !anyIn(splitAuthors(d.Categories), q.categories) {
			continue
		}
		if q.dateFrom != "" && d.PublicationDate < q.dateFrom || q.dateTo != "" && (d.PublicationDate == "" || d.PublicationDate > q.dateTo) {
			continue
		}
		filtered = append(filtered, d)
	}
	return filtered
}

// keywordMatches is the keyword mode's text filter: every word of the query, the last one as
// a prefix (FTS5's prefix match).
func keywordMatches(docs []*document, query string) []*document {
	matches := []*document{}
	words := strings.Fields(strings.ToLower(query))
	var last *regexp.Regexp // compiled once: a large corpus (--papers) is searched whole
	if len(words) > 0 {
		last = regexp.MustCompile(`\b` + regexp.QuoteMeta(words[len(words)-1]))
	}
	for _, d := range docs {
		hay := strings.ToLower(d.Title + " " + d.Abstract + " " + d.Authors + " " + d.Categories)
		ok := true
		for i, w := range words {
			if i == len(words)-1 {
				ok = ok && last.MatchString(hay)
			} else {
				ok = ok && strings.Contains(hay, w)
			}
		}
		if ok {
			matches = append(matches, d)
		}
	}
	return matches
}

// newestPage answers newest first, paged by a "<publication_date>|<id>" cursor. A similarity
// request that could not be ranked lands here too, saying why.
func (s *Sim) newestPage(filtered []*document, q explorerQuery) *reply {
	unavailable := ""
	if q.sort == "similarity" {
		unavailable = "No embedding model is configured, so resmon cannot rank by meaning. Set one up in Settings → AI → Embeddings."
		if s.data.embeddingsEnabled() {
			unavailable = "Ranking by meaning needs a search phrase."
		}
	}
	matches := keywordMatches(filtered, q.query)
	sortForExport(matches)
	start := 0
	if q.cursor != "" {
		date, idStr, ok := strings.Cut(q.cursor, "|")
		id, err := strconv.Atoi(idStr)
		if !ok || err != nil {
			return detailReply(400, "Malformed cursor: "+pyRepr(q.cursor))
		}
		for start < len(matches) && (matches[start].PublicationDate > date || matches[start].PublicationDate == date && matches[start].ID >= id) {
			start++
		}
	}
	page := matches[start:min(start+q.limit, len(matches))]
	hasMore := start+len(page) < len(matches)
	var next any
	if hasMore && len(page) > 0 {
		last := page[len(page)-1]
		next = last.PublicationDate + "|" + strconv.Itoa(last.ID)
	}
	results := []any{}
	for _, d := range page {
		results = append(results, docJSON(d))
	}
	out := o("results", results, "next_cursor", next, "has_more", hasMore, "total", min(len(matches), 10000),
		"total_is_capped", len(matches) > 10000, "count_cap", 10000, "used_full_text_index", q.query != "",
		"page_size", q.limit, "sort", "newest")
	if unavailable != "" {
		out = append(out, kv{"similarity_unavailable", unavailable})
	}
	return okReply(out)
}

func anyIn(have, want []string) bool {
	for _, h := range have {
		if contains(want, h) {
			return true
		}
	}
	return false
}

// similarityPage ranks by meaning, or returns nil when it cannot (the caller falls back).
func (s *Sim) similarityPage(docs []*document, query, cursor string, limit int) *reply {
	if !s.data.embeddingsEnabled() || query == "" {
		return nil
	}
	qt := tokens(query)
	type ranked struct {
		d    *document
		dist float64
	}
	var rk []ranked
	var unranked []*document
	for _, d := range docs {
		if docEmbedded(d) {
			rk = append(rk, ranked{d, distance(qt, docText(d))})
		} else {
			unranked = append(unranked, d)
		}
	}
	sort.SliceStable(rk, func(i, j int) bool {
		if rk[i].dist != rk[j].dist {
			return rk[i].dist < rk[j].dist
		}
		return rk[i].d.ID < rk[j].d.ID
	})
	all := []any{}
	for _, r := range rk {
		all = append(all, append(docJSON(r.d), kv{"distance", round(r.dist, 4)}))
	}
	for _, d := range unranked {
		all = append(all, append(docJSON(d), kv{"distance", nil}))
	}
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return detailReply(400, "Malformed cursor: "+pyRepr(cursor))
		}
		off = min(n, len(all))
	}
	page := all[off:min(off+limit, len(all))]
	hasMore := off+len(page) < len(all)
	var next any
	if hasMore {
		next = strconv.Itoa(off + len(page))
	}
	return okReply(o("results", page, "next_cursor", next, "has_more", hasMore, "total", len(all),
		"total_is_capped", false, "count_cap", 10000, "used_full_text_index", false, "page_size", limit,
		"sort", "similarity", "ranked_count", len(rk), "unranked_count", len(unranked), "model", s.data.settings["embedding_model"]))
}

func (s *Sim) hSimilar(c *call) *reply {
	k, qe := c.queryInt("k", 10, nil, nil)
	if qe != nil {
		return validation(*qe)
	}
	k = min(max(k, 1), 50)
	d := s.data.doc(c.id)
	if !s.data.embeddingsEnabled() {
		return okReply(o("document_id", c.id, "model", nil, "neighbours", []any{},
			"reason", "Nothing is embedded yet, so resmon has nothing to compare this paper against. Set up an embedding model in Settings → AI."))
	}
	model := s.data.settings["embedding_model"]
	if d == nil || !docEmbedded(d) {
		return okReply(o("document_id", c.id, "model", model, "neighbours", []any{},
			"reason", "This paper has no vector for the current model, so resmon cannot say what it is like. Run the backfill in Settings to include it."))
	}
	dt := docText(d)
	type nb struct {
		d    *document
		dist float64
	}
	var nbs []nb
	for _, x := range s.data.docs {
		if x.ID != d.ID && docEmbedded(x) {
			nbs = append(nbs, nb{x, distance(dt, docText(x))})
		}
	}
	sort.SliceStable(nbs, func(i, j int) bool {
		if nbs[i].dist != nbs[j].dist {
			return nbs[i].dist < nbs[j].dist
		}
		return nbs[i].d.ID < nbs[j].d.ID
	})
	out := []any{}
	for _, n := range nbs[:min(k, len(nbs))] {
		out = append(out, append(docJSON(n.d), kv{"distance", round(n.dist, 4)}))
	}
	var reason any
	if len(out) == 0 {
		reason = "Nothing else in the corpus is embedded with this model yet."
	}
	return okReply(o("document_id", d.ID, "model", model, "neighbours", out, "reason", reason))
}

// ---- why ----

var operatorRE = lazyRegexp(`\b(AND|OR|NOT)\b`)

func (s *Sim) hWhy(c *call) *reply {
	execFilter, qe := c.queryInt("execution_id", 0, nil, nil)
	if qe != nil {
		return validation(*qe)
	}
	_, filtered := c.q["execution_id"]
	d := s.data.doc(c.id)
	if d == nil {
		return detailReply(404, fmt.Sprintf("No document with id %d", c.id))
	}
	cat, _ := catalogBySlug(d.Source)
	runs := []any{}
	var kws []string
	for _, e := range s.data.execs {
		if filtered && e.ID != execFilter {
			continue
		}
		if !containsInt(e.Docs, d.ID) {
			continue
		}
		var routineName any
		if r := s.data.routine(e.RoutineID); r != nil {
			routineName = r.Name
		}
		kw, _ := paramKeywords(e.Params).([]any)
		runs = append(runs, o("execution_id", e.ID, "execution_type", e.Type, "start_time", e.Start,
			"routine_name", routineName, "keywords", nonNilList(kw)))
		for _, k := range kw {
			if ks, ok := k.(string); ok && !contains(kws, ks) {
				kws = append(kws, ks)
			}
		}
	}
	fields := []struct{ name, text string }{{"title", d.Title}, {"abstract", d.Abstract}, {"categories", d.Categories}, {"authors", d.Authors}}
	kwOut := []any{}
	matched := 0
	for _, k := range kws {
		phrase := strings.Trim(k, `"`)
		re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(phrase) + `\b`)
		var in []any
		var names []string
		for _, f := range fields {
			if re.MatchString(f.text) {
				in = append(in, f.name)
				names = append(names, "the "+f.name)
			}
		}
		where := "nowhere resmon can check"
		if len(names) > 0 {
			matched++
			where = joinAnd(names)
		}
		kwOut = append(kwOut, o("keyword", k, "matched", len(in) > 0, "fields", nonNilList(in), "where", where,
			"contains_operators", operatorRE().MatchString(k)))
	}
	filteredLocally := d.Source == "biorxiv" || d.Source == "medrxiv"
	var verdict, headline string
	switch {
	case len(kws) == 0:
		verdict, headline = "no_keywords_recorded", "resmon has no record of which keywords found this paper, so it cannot explain the match."
	case filteredLocally:
		verdict, headline = "resmon_filtered", fmt.Sprintf("resmon itself matched this paper's keywords: %s cannot search by keyword, so resmon filtered its listing locally.", cat.name)
	case matched > 0:
		verdict, headline = "local_evidence", fmt.Sprintf("“%s” appears in this paper. That makes it a plausible match — but %s chose to return it for its own reasons, which resmon cannot see.", firstMatched(kwOut), cat.name)
	default:
		verdict, headline = "no_local_evidence", fmt.Sprintf("None of the keywords appears in what resmon stores for this paper. %s ranks by relevance, so a paper matching no keyword is expected rather than a fault.", cat.name)
	}
	return okReply(o("document", o("id", d.ID, "title", d.Title, "source_repository", d.Source, "doi", ns(d.DOI),
		"publication_date", ns(d.PublicationDate), "first_seen_at", d.FirstSeenAt),
		"source", o("slug", d.Source, "name", cat.name, "keyword_combination", cat.combination,
			"keyword_combination_notes", "How "+cat.name+" combines several keywords: "+strings.ToLower(cat.combination)+".",
			"resmon_filtered_locally", filteredLocally),
		"runs", runs, "keywords", kwOut, "matched_count", matched, "keyword_count", len(kws),
		"verdict", verdict, "headline", headline,
		"what_resmon_cannot_see", []any{
			"resmon stores each paper's title, abstract, authors and categories — not its full text. A keyword that appears only in the body is invisible here.",
			"Most sources rank by relevance with their own rules; resmon cannot see why a source returned a paper."},
		"fields_checked", []any{"title", "abstract", "categories", "authors"}))
}

func firstMatched(kws []any) string {
	for _, k := range kws {
		ko := k.(obj)
		if m, _ := ko.get("matched"); m == true {
			v, _ := ko.get("keyword")
			return v.(string)
		}
	}
	return ""
}

func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

func containsInt(ns []int, n int) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// ---- lifecycle ----

var severityRank = map[string]int{"critical": 0, "caution": 1, "informational": 2}

func (s *Sim) hLifecycle(c *call) *reply {
	d := s.data.doc(c.id)
	if d == nil {
		return detailReply(404, fmt.Sprintf("No document with id %d", c.id))
	}
	st := s.data.lifecycle[d.ID]
	events := []any{}
	var checkedAt, status any
	if st != nil {
		evs := append([]lifecycleEvent(nil), st.Events...)
		sort.SliceStable(evs, func(i, j int) bool {
			if severityRank[evs[i].Severity] != severityRank[evs[j].Severity] {
				return severityRank[evs[i].Severity] < severityRank[evs[j].Severity]
			}
			return evs[i].NoticeDate > evs[j].NoticeDate
		})
		for _, e := range evs {
			events = append(events, o("document_id", d.ID, "kind", e.Kind, "severity", e.Severity, "notice_key", e.NoticeKey,
				"label", e.Label, "notice_doi", ns(e.NoticeDOI), "notice_url", ns(e.NoticeURL), "notice_date", ns(e.NoticeDate),
				"detail", ns(e.Detail), "provider", e.Provider, "provider_source", e.ProviderSource, "first_seen_at", e.FirstSeenAt))
		}
		checkedAt, status = st.CheckedAt, st.CheckStatus
	}
	return okReply(o("document_id", d.ID, "events", events, "checked_at", checkedAt, "check_status", status))
}

// ---- catalog, credentials ----

func (s *Sim) hCatalog(c *call) *reply {
	out := make([]any, 0, len(catalog))
	for _, e := range catalog {
		out = append(out, catalogJSON(e))
	}
	return okReply(out)
}

func (s *Sim) hCredentials(c *call) *reply {
	creds := obj{}
	for _, n := range credentialNames() {
		st := s.data.creds[n]
		if st == "" {
			st = "absent"
		}
		creds = append(creds, kv{n, o("present", st == "present", "status", st)})
	}
	return okReply(o("keyring_responsive", true, "credentials", creds))
}

// lazyRegexp compiles a package-level pattern on first use, not at init: every process of the
// gateway's binary links the simulator and runs its init (the simulator shares no code with
// the gateway, so it keeps this twin of internal/lazyre).
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
