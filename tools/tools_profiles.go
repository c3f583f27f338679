package tools

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/backend"
)

// Watch-profile tools: list_watch_profiles, get_watch_profile, get_profile_matches,
// create_watch_profile.

// basisGlossary travels with every get_profile_matches answer, empty ones included: a
// harness reading the shape before there is data still learns what basis means, and a
// name_only row must never be repeated as "this person's paper".
var basisGlossary = map[string]string{
	"identifier":       "The source returned this profile's identifier (such as its ORCID) on the paper: the match is by identity.",
	"name+affiliation": "A name and an affiliation both matched. That is not identity: two people with the same name at the same institution would both match.",
	"name_only":        "Only the name matched. This is not evidence that the paper is by this person; do not attribute it to them without checking.",
}

func glossary() map[string]any {
	out := make(map[string]any, len(basisGlossary))
	for k, v := range basisGlossary {
		out[k] = v
	}
	return out
}

func toolListWatchProfiles(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	limit, offset := limitArg(args), OffsetArg(args)
	// kind is one of the schema's enum: the backend answers an unknown kind with an empty
	// list, which a caller would report as "no profiles".
	var q url.Values
	if kind := stringArg(args, "kind"); kind != "" {
		q = url.Values{"kind": {kind}}
	}
	res, err := callGet(ctx, api, "/api/profiles", q)
	if err != nil {
		return nil, err
	}
	_, all, terr := objectWithRows(res, "a list of watch profiles", "profiles")
	if terr == nil {
		terr = rowsHolding(all, "a list of watch profiles", "id")
	}
	if terr != nil {
		return nil, terr
	}
	rows := make([]any, 0, len(all))
	for _, p := range all {
		rows = append(rows, profileSummary(ValMap(p)))
	}
	pg := pageRows(rows, offset, limit)
	return map[string]any{"profiles": pg, "count": len(pg), "total": len(rows)}, nil
}

// profileSummary keeps basis_warning on every row: a list is what a harness summarises from.
func profileSummary(p map[string]any) map[string]any {
	names := []any{}
	for _, n := range ValList(p["names"]) {
		switch x := n.(type) {
		case map[string]any:
			names = append(names, x["value"])
		case string:
			names = append(names, x)
		}
	}
	ids := ValMap(p["identifiers"])
	schemes := make([]string, 0, len(ids))
	for k := range ids {
		schemes = append(schemes, k)
	}
	sort.Strings(schemes)
	var orcid any
	switch o := ids["orcid"].(type) {
	case map[string]any:
		orcid = o["value"]
	case string:
		orcid = o
	}
	affiliations := p["affiliations"]
	if affiliations == nil {
		affiliations = []any{}
	}
	return map[string]any{
		"id":            p["id"],
		"kind":          p["kind"],
		"display_name":  p["display_name"],
		"names":         names,
		"identifiers":   schemes,
		"orcid":         orcid,
		"affiliations":  affiliations,
		"basis_warning": p["basis_warning"],
	}
}

func toolGetWatchProfile(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	id, terr := intArg(args, "profile_id")
	if terr != nil {
		return nil, terr
	}
	profile, err := callGet(ctx, api, idPath("/api/profiles/%d", id), nil)
	if err != nil {
		return nil, err
	}
	if _, terr := replyObject(profile, "a watch profile", "id"); terr != nil {
		return nil, terr
	}
	m, err := callGet(ctx, api, idPath("/api/profiles/%d/matches", id), url.Values{"limit": {"1"}})
	if err != nil {
		return nil, err
	}
	// The per-basis counts are the point of this answer: without them it would read as "no
	// name-only matches", so a reply lacking them is an error, not zeros.
	mm, terr := replyObject(m, "a profile's match counts", "total", "by_basis")
	if terr != nil {
		return nil, terr
	}
	return map[string]any{"profile": profile, "matches": map[string]any{"total": mm["total"], "by_basis": mm["by_basis"]}}, nil
}

func toolGetProfileMatches(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	id, terr := intArg(args, "profile_id")
	if terr != nil {
		return nil, terr
	}
	q := url.Values{"limit": {strconv.Itoa(limitArg(args))}, "offset": {strconv.Itoa(OffsetArg(args))}}
	res, err := callGet(ctx, api, idPath("/api/profiles/%d/matches", id), q)
	if err != nil {
		return nil, err
	}
	// by_basis is required: {} made up for it would read as "no name-only matches".
	body, rows, terr := objectWithRows(res, "a profile's matches", "matches", "total", "by_basis")
	if terr == nil {
		terr = rowsHolding(rows, "a profile's matches", "document_id", "basis")
	}
	if terr != nil {
		return nil, terr
	}
	matches := make([]any, 0, len(rows))
	for _, row := range rows {
		r := ValMap(row)
		matches = append(matches, map[string]any{
			"doc_id":           r["document_id"],
			"title":            r["title"],
			"basis":            r["basis"],
			"matched_author":   r["matched_author"],
			"evidence":         decodedEvidence(r["evidence"]),
			"source":           r["source_repository"],
			"doi":              r["doi"],
			"url":              r["url"],
			"publication_date": r["publication_date"],
			"first_seen_at":    r["first_seen_at"],
		})
	}
	byBasis := body["by_basis"]
	return map[string]any{
		"matches":            matches,
		"count":              len(matches),
		"total":              body["total"],
		"by_basis":           byBasis,
		"what_a_basis_means": glossary(),
	}, nil
}

// decodedEvidence unwraps evidence the backend stores as JSON text, so the caller reads an
// object rather than an escaped string; anything else is returned as it came.
func decodedEvidence(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return v
	}
	var parsed any
	if json.Unmarshal([]byte(t), &parsed) != nil {
		return v
	}
	return parsed
}

func toolCreateWatchProfile(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	name, terr := requiredStringArg(args, "name")
	if terr != nil {
		return nil, terr
	}
	lists := map[string][]string{}
	for _, k := range []string{"aliases", "affiliations", "field_hints"} {
		l := stringListArg(args, k)
		if l == nil {
			l = []string{}
		}
		lists[k] = l
	}
	names := []any{map[string]any{"value": name}}
	for _, a := range lists["aliases"] {
		names = append(names, map[string]any{"value": a})
	}
	identifiers := map[string]any{}
	if orcid := strings.TrimSpace(stringArg(args, "orcid")); orcid != "" {
		cited := strings.TrimSpace(stringArg(args, "orcid_cited"))
		if cited == "" {
			cited = "entered through an MCP client"
		}
		identifiers["orcid"] = map[string]any{"value": orcid, "cited": cited}
	}
	body := map[string]any{
		"kind":         "person",
		"display_name": name,
		"names":        names,
		"identifiers":  identifiers,
		"affiliations": lists["affiliations"],
		"field_hints":  lists["field_hints"],
	}
	res, err := callPost(ctx, api, "/api/profiles", body, true)
	if err != nil {
		return nil, err
	}
	created, terr := writeReply(res, "the created watch profile", "id")
	if terr != nil {
		return nil, terr
	}
	out := map[string]any{"profile": created}
	// Placement is the point: the warning sits at the top of the answer, where it is repeated.
	// Each sentence says only what the reply shows: the reference says "Created with an
	// ORCID" whenever basis_warning is missing, whatever the reply holds.
	switch w, _ := created["basis_warning"].(string); {
	case w != "":
		out["basis_warning"] = w
		out["detail"] = "Created. " + w + " Add an ORCID with update in the app to change that."
	case replyORCID(created) != "":
		out["detail"] = "Created with an ORCID, so a paper can be matched by identity rather than by name."
	default:
		out["detail"] = "Created. resmon's reply shows neither an ORCID on the profile nor a basis_warning, so it does not say " +
			"whether its matches will be by identity or only by name; get_watch_profile shows the profile as resmon keeps it."
	}
	return out, nil
}

// replyORCID is the ORCID a profile in a reply holds ("" when it shows none): a string or
// {"value": …} under identifiers.orcid, as the backend accepts either.
func replyORCID(profile map[string]any) string {
	switch o := ValMap(profile["identifiers"])["orcid"].(type) {
	case string:
		return strings.TrimSpace(o)
	case map[string]any:
		v, _ := o["value"].(string)
		return strings.TrimSpace(v)
	}
	return ""
}
