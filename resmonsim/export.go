package resmonsim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// exportFormats maps a reference format to its content type and file extension (§6.12).
var exportFormats = map[string][2]string{
	"bibtex": {"application/x-bibtex", "bib"},
	"csv":    {"text/csv; charset=utf-8", "csv"},
	"json":   {"application/json", "json"},
	"ris":    {"application/x-research-info-systems", "ris"},
}

const unknownFormatMsg = "Unknown export format '%s'. Expected one of: bibtex, csv, json, ris."

// sortForExport orders documents publication_date DESC, id DESC (NULL dates last).
func sortForExport(docs []*document) {
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].PublicationDate != docs[j].PublicationDate {
			return docs[i].PublicationDate > docs[j].PublicationDate
		}
		return docs[i].ID > docs[j].ID
	})
}

// exportReply renders docs as a file body with the export headers.
func exportReply(docs []*document, format, stem string, includeIDs bool) *reply {
	sortForExport(docs)
	var body []byte
	switch format {
	case "json":
		rows := make([]any, 0, len(docs))
		for _, d := range docs {
			row := o("title", d.Title, "authors", d.Authors, "publication_date", ns(d.PublicationDate), "doi", ns(d.DOI),
				"url", ns(d.URL), "source_repository", d.Source, "external_id", d.ExternalID, "categories", ns(d.Categories),
				"abstract", ns(d.Abstract))
			if includeIDs {
				row = append(row, kv{"id", d.ID})
			}
			rows = append(rows, row)
		}
		compact, _ := marshalCompact(rows)
		var b bytes.Buffer
		_ = json.Indent(&b, compact, "", "  ")
		body = b.Bytes()
	case "bibtex":
		body = []byte(renderBibTeX(docs))
	case "ris":
		body = []byte(renderRIS(docs))
	case "csv":
		body = renderCSV(docs)
	}
	ft := exportFormats[format]
	rep := &reply{status: 200, raw: body, ctype: ft[0]}
	rep.headers = append(rep.headers,
		[2]string{"Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, stem, ft[1])},
		[2]string{"X-Resmon-Document-Count", strconv.Itoa(len(docs))})
	return rep
}

func splitAuthors(a string) []string {
	var out []string
	for _, p := range strings.Split(a, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func year(date string) string {
	if len(date) >= 4 {
		return date[:4]
	}
	return ""
}

// bibKey is first author's surname + year + first title word longer than 3 letters.
func bibKey(d *document, used map[string]int) string {
	letters := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if r < unicode.MaxASCII && unicode.IsLetter(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	surname := "anon"
	if as := splitAuthors(d.Authors); len(as) > 0 {
		parts := strings.Fields(as[0])
		if s := letters(parts[len(parts)-1]); s != "" {
			surname = s
		}
	}
	y := year(d.PublicationDate)
	if y == "" {
		y = "nodate"
	}
	word := ""
	for _, w := range strings.Fields(d.Title) {
		if lw := letters(w); len(lw) > 3 {
			word = lw
			break
		}
	}
	key := surname + y + word
	used[key]++
	if n := used[key]; n > 1 {
		key += strconv.Itoa(n)
	}
	return key
}

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`,
	"_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

func renderBibTeX(docs []*document) string {
	var b strings.Builder
	used := map[string]int{}
	for i, d := range docs {
		if i > 0 {
			b.WriteString("\n")
		}
		kind := "misc"
		if d.DOI != "" {
			kind = "article"
		}
		fmt.Fprintf(&b, "@%s{%s,\n", kind, bibKey(d, used))
		field := func(k, v string) {
			if v != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", k, latexEscaper.Replace(v))
			}
		}
		field("title", d.Title)
		field("author", strings.Join(splitAuthors(d.Authors), " and "))
		field("year", year(d.PublicationDate))
		field("doi", d.DOI)
		field("url", d.URL)
		field("note", "Retrieved via resmon from "+d.Source)
		field("keywords", d.Categories)
		field("abstract", d.Abstract)
		b.WriteString("}\n")
	}
	return b.String()
}

func renderRIS(docs []*document) string {
	var b strings.Builder
	for _, d := range docs {
		ty := "GEN"
		if d.DOI != "" {
			ty = "JOUR"
		}
		line := func(tag, v string) {
			if v != "" {
				fmt.Fprintf(&b, "%s  - %s\r\n", tag, v)
			}
		}
		line("TY", ty)
		line("TI", d.Title)
		for _, a := range splitAuthors(d.Authors) {
			line("AU", a)
		}
		line("PY", year(d.PublicationDate))
		line("DA", strings.ReplaceAll(d.PublicationDate, "-", "/"))
		line("DO", d.DOI)
		line("UR", d.URL)
		for _, k := range splitAuthors(d.Categories) {
			line("KW", k)
		}
		line("AB", d.Abstract)
		line("DB", d.Source)
		line("N1", "Retrieved via resmon from "+d.Source)
		b.WriteString("ER  - \r\n\r\n")
	}
	return b.String()
}

func renderCSV(docs []*document) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	_ = w.Write([]string{"title", "authors", "publication_date", "doi", "url", "source_repository", "external_id", "categories", "abstract"})
	for _, d := range docs {
		_ = w.Write([]string{d.Title, d.Authors, d.PublicationDate, d.DOI, d.URL, d.Source, d.ExternalID, d.Categories, d.Abstract})
	}
	w.Flush()
	return b.Bytes()
}
