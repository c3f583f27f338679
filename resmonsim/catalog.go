package resmonsim

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// catalogEntry is the abridged source of one /api/repositories/catalog row; the other keys
// of §6.4 are derived from it.
type catalogEntry struct {
	slug, name, coverage, keyReq, cred, granularity, combination, attribReq, host string
}

// catalog is resmon 2.3's 27 sources, alphabetical by slug.
var catalog = []catalogEntry{
	{"arxiv", "arXiv", "Physics / Math / CS / Quant-bio / Stats / EE / Econ", "none", "", "day", "Implicit AND", "requested", "arxiv.org"},
	{"biorxiv", "bioRxiv", "Biology preprints", "none", "", "day", "Local filter (resmon matches keywords itself)", "requested", "biorxiv.org"},
	{"core", "CORE", "Open-access research outputs, all fields", "required", "core_api_key", "year", "Boolean AND", "requested", "core.ac.uk"},
	{"crossref", "Crossref", "DOI metadata, all fields", "none", "", "day", "Relevance-ranked (OR-like)", "none", "crossref.org"},
	{"datacite", "DataCite", "Datasets and research objects", "none", "", "day", "Implicit AND", "none", "datacite.org"},
	{"dblp", "dblp", "Computer science bibliography", "none", "", "year", "Implicit AND", "requested", "dblp.org"},
	{"doaj", "DOAJ", "Open-access journals, all fields", "none", "", "year", "Boolean AND", "none", "doaj.org"},
	{"dryad", "Dryad", "Research data", "none", "", "day", "Relevance-ranked (OR-like)", "none", "datadryad.org"},
	{"eric", "ERIC", "Education research", "none", "", "year", "Implicit AND", "none", "eric.ed.gov"},
	{"europepmc", "Europe PMC", "Life sciences literature", "none", "", "day", "Boolean AND", "requested", "europepmc.org"},
	{"govinfo", "GovInfo", "US government publications", "required", "govinfo_api_key", "day", "Implicit AND", "none", "govinfo.gov"},
	{"hal", "HAL", "French open archive, all fields", "none", "", "day", "Implicit AND", "none", "hal.science"},
	{"inspire_hep", "INSPIRE-HEP", "High-energy physics", "none", "", "day", "Implicit AND", "requested", "inspirehep.net"},
	{"medrxiv", "medRxiv", "Health sciences preprints", "none", "", "day", "Local filter (resmon matches keywords itself)", "requested", "medrxiv.org"},
	{"nasa_ads", "NASA ADS", "Astronomy and astrophysics", "required", "nasa_ads_api_key", "month", "Boolean AND", "required", "ui.adsabs.harvard.edu"},
	{"ndl_search", "NDL Search", "National Diet Library (Japan)", "none", "", "year", "Implicit AND", "none", "ndlsearch.ndl.go.jp"},
	{"nist_rmm", "NIST Research Materials", "NIST measurement science", "none", "", "year", "Implicit AND", "none", "nist.gov"},
	{"oapen", "OAPEN", "Open-access books", "none", "", "year", "Implicit AND", "none", "oapen.org"},
	{"openaire", "OpenAIRE", "European research outputs", "none", "", "day", "Boolean AND", "none", "openaire.eu"},
	{"openalex", "OpenAlex", "All fields (scholarly works graph)", "none", "", "day", "Relevance-ranked (OR-like)", "requested", "openalex.org"},
	{"openlibrary", "Open Library", "Books", "none", "", "year", "Implicit AND", "none", "openlibrary.org"},
	{"osti", "OSTI", "US DOE research", "none", "", "day", "Implicit AND", "none", "osti.gov"},
	{"plos", "PLOS", "PLOS journals", "none", "", "day", "Boolean AND", "none", "plos.org"},
	{"pubmed", "PubMed", "Biomedical literature", "recommended", "pubmed_api_key", "day", "Boolean AND", "none", "pubmed.ncbi.nlm.nih.gov"},
	{"semantic_scholar", "Semantic Scholar", "All fields (AI-ranked)", "optional", "semantic_scholar_api_key", "year", "Relevance-ranked (OR-like)", "required", "semanticscholar.org"},
	{"springer", "Springer Nature", "Springer journals and books", "required", "springer_api_key", "day", "Boolean AND", "none", "springernature.com"},
	{"zenodo", "Zenodo", "Research outputs of all kinds", "none", "", "day", "Implicit AND", "none", "zenodo.org"},
}

func catalogBySlug(slug string) (catalogEntry, bool) {
	for _, e := range catalog {
		if e.slug == slug {
			return e, true
		}
	}
	return catalogEntry{}, false
}

func sourceName(slug string) string {
	if e, ok := catalogBySlug(slug); ok {
		return e.name
	}
	return slug
}

func catalogJSON(e catalogEntry) obj {
	placeholder, registration := "", any(nil)
	var cred any
	if e.cred != "" {
		cred = e.cred
		placeholder = "Enter API key here (" + strings.ToUpper(e.keyReq) + ")"
		registration = "https://" + e.host + "/api-key"
	}
	attribution := ""
	if e.attribReq != "none" {
		attribution = "Thank you to " + e.name + " for use of its open access interoperability."
	}
	parallel := "Yes"
	if e.slug == "arxiv" || e.keyReq == "required" {
		parallel = "No"
	}
	return o(
		"slug", e.slug, "name", e.name,
		"description", e.name+" — "+e.coverage+" (simulated catalog entry)",
		"subject_coverage", e.coverage,
		"endpoint", "https://api."+e.host+"/",
		"query_method", "GET JSON search with the query and a date filter",
		"rate_limit", "1 req/s",
		"client_module", "api_"+e.slug+".py",
		"api_key_requirement", e.keyReq,
		"credential_name", cred,
		"website", "https://"+e.host,
		"registration_url", registration,
		"placeholder", placeholder,
		"upstream_policy", "Polite use; identify the client in the User-Agent.",
		"parallel_safe", parallel,
		"notes", "Simulated entry; values abridged.",
		"keyword_combination", e.combination,
		"keyword_combination_notes", "How "+e.name+" combines several keywords: "+strings.ToLower(e.combination)+".",
		"attribution", attribution,
		"attribution_requirement", e.attribReq,
		"attribution_source", "https://"+e.host+"/terms",
		"date_granularity", e.granularity,
	)
}

var aiCredentialNames = []string{"alibaba_api_key", "anthropic_api_key", "custom_llm_api_key", "deepseek_api_key",
	"google_api_key", "meta_api_key", "openai_api_key", "xai_api_key"}

// credentialNames = catalog credential names ∪ AI names ∪ SMTP, sorted.
func credentialNames() []string {
	set := map[string]bool{"smtp_password": true}
	for _, n := range aiCredentialNames {
		set[n] = true
	}
	for _, e := range catalog {
		if e.cred != "" {
			set[e.cred] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// asInt is pydantic's lax int: ints, integral floats and numeric strings.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case bool:
		return b01(x), true
	case json.Number:
		if n, err := strconv.Atoi(x.String()); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) {
			return int(f), true
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n, true
		}
	}
	return 0, false
}
