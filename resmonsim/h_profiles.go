package resmonsim

import (
	"fmt"
	"sort"
	"strings"
)

const msgProfileNotFound = "That profile does not exist."

const (
	warnAffiliationOnly = "This profile has no ORCID, so a paper can only be matched by name and affiliation — never by identity. Two researchers with the same name at the same institution would both match."
	warnNameOnly        = "This profile has neither an identifier nor an affiliation, so **every match will be name-only**: resmon can tell you a paper has this name on it and nothing more. Add an ORCID, or an affiliation, to do better."
)

func (p *profile) orcid() string {
	for _, id := range p.Identifiers {
		if id.Scheme == "orcid" {
			return id.Value
		}
	}
	return ""
}

func profileJSON(p *profile) obj {
	names := []any{}
	for _, n := range p.Names {
		names = append(names, o("value", n.Value, "script", n.Script))
	}
	ids := obj{}
	for _, id := range p.Identifiers {
		e := o("value", id.Value)
		if id.Cited != "" {
			e = append(e, kv{"cited", id.Cited})
		}
		ids = append(ids, kv{id.Scheme, e})
	}
	var warning any
	switch {
	case p.orcid() != "":
	case len(p.Affiliations) > 0:
		warning = warnAffiliationOnly
	default:
		warning = warnNameOnly
	}
	return o("id", p.ID, "kind", p.Kind, "display_name", p.DisplayName, "names", names, "identifiers", ids,
		"affiliations", strSlice(p.Affiliations), "field_hints", strSlice(p.Fields), "notes", ns(p.Notes),
		"created_at", p.CreatedAt, "updated_at", p.UpdatedAt, "basis_warning", warning)
}

type profileMatch struct {
	d             *document
	basis, author string
	evidence      any
}

// matches derives a profile's matches from the corpus: a paper carrying one of its names,
// with the basis the evidence allows (identifier for some when an ORCID exists).
func (c *corpus) matches(p *profile) []profileMatch {
	var out []profileMatch
	for _, d := range c.docs {
		author := ""
		for _, a := range splitAuthors(d.Authors) {
			for _, n := range p.Names {
				if strings.EqualFold(a, n.Value) && author == "" {
					author = a
				}
			}
		}
		if author == "" {
			continue
		}
		m := profileMatch{d: d, author: author, basis: "name_only"}
		switch {
		case p.orcid() != "" && d.ID%3 == 0:
			m.basis = "identifier"
			m.evidence = pyDumps(o("orcid", p.orcid(), "source", d.Source))
		case len(p.Affiliations) > 0 && d.ID%3 != 2:
			m.basis = "name+affiliation"
			m.evidence = pyDumps(o("name", author, "affiliation", p.Affiliations[0]))
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].d.FirstSeenAt != out[j].d.FirstSeenAt {
			return out[i].d.FirstSeenAt > out[j].d.FirstSeenAt
		}
		return out[i].d.ID > out[j].d.ID
	})
	return out
}

func (s *Sim) hProfiles(c *call) *reply {
	kind := c.queryStr("kind", "")
	ps := append([]*profile(nil), s.data.profiles...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].DisplayName < ps[j].DisplayName })
	out := []any{}
	for _, p := range ps {
		if kind == "" || p.Kind == kind {
			out = append(out, profileJSON(p))
		}
	}
	return okReply(o("profiles", out))
}

func (s *Sim) hProfile(c *call) *reply {
	p := s.data.profile(c.id)
	if p == nil {
		return detailReply(404, msgProfileNotFound)
	}
	return okReply(profileJSON(p))
}

func (s *Sim) hProfileMatches(c *call) *reply {
	limit, e1 := c.queryInt("limit", 50, nil, nil)
	offset, e2 := c.queryInt("offset", 0, nil, nil)
	for _, e := range []*obj{e1, e2} {
		if e != nil {
			return validation(*e)
		}
	}
	limit, offset = min(max(limit, 1), 200), max(offset, 0)
	p := s.data.profile(c.id)
	if p == nil {
		return detailReply(404, msgProfileNotFound)
	}
	all := s.data.matches(p)
	byBasis := o("identifier", 0, "name+affiliation", 0, "name_only", 0)
	for _, m := range all {
		n, _ := byBasis.get(m.basis)
		byBasis = byBasis.set(m.basis, n.(int)+1)
	}
	// by_basis carries only the bases that occur, as a GROUP BY would.
	present := obj{}
	for _, p := range byBasis {
		if p.v.(int) > 0 {
			present = append(present, p)
		}
	}
	list := []any{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		m, d := all[i], all[i].d
		list = append(list, o("document_id", d.ID, "basis", m.basis, "matched_author", m.author, "evidence", m.evidence,
			"first_seen_at", d.FirstSeenAt, "title", d.Title, "source_repository", d.Source, "doi", ns(d.DOI),
			"url", ns(d.URL), "publication_date", ns(d.PublicationDate)))
	}
	return okReply(o("matches", list, "total", len(all), "by_basis", present))
}

var (
	orcidRE = lazyRegexp(`^(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dXx])$`)
	rorRE   = lazyRegexp(`^0[a-z0-9]{6}\d{2}$`)
)

func isASCII(s string) bool {
	for _, r := range s {
		if r > 0x7f {
			return false
		}
	}
	return true
}

func (s *Sim) hCreateProfile(c *call) *reply {
	f, _, rep := c.validBody(watchProfileBody)
	if rep != nil {
		return rep
	}
	kind := strings.ToLower(strings.TrimSpace(f.str("kind")))
	if kind != "person" && kind != "institution" && kind != "group" {
		return detailReply(400, fmt.Sprintf("'%s' is not a kind of profile. Use one of: person, institution, group.", kind))
	}
	display := strings.TrimSpace(f.str("display_name"))
	names := profileNames(f["names"].([]any), display)
	if len(names) == 0 {
		return detailReply(400, "A profile needs at least one name.")
	}
	if display == "" {
		display = names[0].Value
	}
	ids, msg := profileIdentifiers(f.object("identifiers"))
	if msg != "" {
		return detailReply(400, msg)
	}
	p := &profile{Kind: kind, DisplayName: display, Names: names, Notes: strings.TrimSpace(f.str("notes")),
		Affiliations: trimmedStrings(f.strs("affiliations")), Fields: trimmedStrings(f.strs("field_hints")), Identifiers: ids}
	now := c.now.UTC().Format(sqlTime)
	p.CreatedAt, p.UpdatedAt = now, now
	s.data.addProfile(p)
	return jsonReply(201, profileJSON(p))
}

// profileNames normalises the names: strings or {"value","script"}, deduplicated without
// regard to case, "latin" for an all-ASCII name without a script; the display name when there
// are none.
func profileNames(raw []any, display string) []nameEntry {
	var names []nameEntry
	add := func(v, script string) {
		v = strings.TrimSpace(v)
		if v == "" {
			return
		}
		for _, n := range names {
			if strings.EqualFold(n.Value, v) {
				return
			}
		}
		if script == "" && isASCII(v) {
			script = "latin"
		}
		names = append(names, nameEntry{v, script})
	}
	for _, n := range raw {
		switch x := n.(type) {
		case string:
			add(x, "")
		case obj:
			v, _ := x.get("value")
			sc, _ := x.get("script")
			vs, _ := v.(string)
			scs, _ := sc.(string)
			add(vs, scs)
		}
	}
	if len(names) == 0 {
		add(display, "")
	}
	return names
}

// profileIdentifiers reads the known identifier schemes (a string or {"value","cited"} each),
// normalising ORCID and ROR, or returns the 400 sentence for a malformed one.
func profileIdentifiers(ids obj) ([]kvIdent, string) {
	var out []kvIdent
	for _, scheme := range []string{"orcid", "openalex", "ror", "semantic_scholar"} {
		v, ok := ids.get(scheme)
		if !ok || v == nil {
			continue
		}
		var e identEntry
		switch x := v.(type) {
		case string:
			e.Value = x
		case obj:
			vv, _ := x.get("value")
			cv, _ := x.get("cited")
			e.Value, _ = vv.(string)
			e.Cited, _ = cv.(string)
		}
		e.Value = strings.TrimSpace(e.Value)
		if e.Value == "" {
			continue
		}
		switch scheme {
		case "orcid":
			bare := strings.TrimPrefix(strings.TrimPrefix(e.Value, "https://orcid.org/"), "http://orcid.org/")
			m := orcidRE().FindStringSubmatch(bare)
			if m == nil {
				return nil, fmt.Sprintf("%s is not an ORCID iD. An ORCID looks like 0000-0002-1825-0097.", pyRepr(e.Value))
			}
			e.Value = strings.ToUpper(m[1] + "-" + m[2] + "-" + m[3] + "-" + m[4])
		case "ror":
			bare := strings.ToLower(strings.TrimPrefix(e.Value, "https://ror.org/"))
			if !rorRE().MatchString(bare) {
				return nil, fmt.Sprintf("%s is not a ROR id. A ROR id is nine characters, like 05dxps055.", pyRepr(e.Value))
			}
			e.Value = bare
		}
		out = append(out, kvIdent{scheme, e})
	}
	return out, ""
}

// trimmedStrings drops blank entries and trims the rest.
func trimmedStrings(l []string) []string {
	out := []string{}
	for _, s := range l {
		if t := strings.TrimSpace(s); t != "" {
			out = append(out, t)
		}
	}
	return out
}
