// Package tooltable prints the tool table for people and scripts: each tool's name, whether it
// reads or writes, and one line on what it does.
package tooltable

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/resmongw/resmongw/toolfacts"
	"github.com/spf13/pflag"
)

// Selection picks which rows of the table to print.
type Selection int

const (
	All    Selection = iota
	Reads            // the tools a harness may run without asking
	Writes           // the tools a person confirms first
)

// Row is one tool as `resmongw tools` prints it. The JSON names are what scripts read.
type Row struct {
	Name string `json:"name"`
	// Access is "read" or "write"; a write is exactly a tool with requires_confirmation.
	Access               string `json:"access"`
	RequiresConfirmation bool   `json:"requires_confirmation"`
	Summary              string `json:"summary"`
}

// Rows are the selected tools, in the table's order.
func Rows(table []toolfacts.Row, sel Selection) []Row {
	rows := []Row{}
	for _, t := range table {
		if (sel == Reads && t.RequiresConfirmation) || (sel == Writes && !t.RequiresConfirmation) {
			continue
		}
		access := "read"
		if t.RequiresConfirmation {
			access = "write"
		}
		rows = append(rows, Row{Name: t.Name, Access: access, RequiresConfirmation: t.RequiresConfirmation, Summary: summary(t)})
	}
	return rows
}

// summary is the tool's one line: its Summary, or while that is empty the first sentence of
// its description.
func summary(t toolfacts.Row) string {
	if s := strings.TrimSpace(t.Summary); s != "" {
		return s
	}
	return FirstSentence(t.Description)
}

// FirstSentence is s up to and including the first full stop that ends a sentence (one
// followed by a space or the end), on one line.
func FirstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// Write prints rows: a table for people, or a JSON array when asJSON.
func Write(w io.Writer, rows []Row, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tR/W\tWHAT IT DOES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Access, r.Summary)
	}
	return tw.Flush()
}

const usage = `Usage: resmongw tools [--reads|--writes] [--json]

Prints resmon's tools: the name, read or write, and what each does. Reads may run without
asking; a person confirms every write. --json prints the same rows for scripts, for example
to build a harness's allow-list:  resmongw tools --reads --json | jq -r '.[].name'
`

// Options are the tools command's flags.
type Options struct {
	Reads, Writes, JSON bool
}

// BindFlags declares the tools command's flags on fs, bound to o.
func BindFlags(fs *pflag.FlagSet, o *Options) {
	fs.BoolVar(&o.Reads, "reads", false, "only the tools that may run without asking")
	fs.BoolVar(&o.Writes, "writes", false, "only the tools a person confirms first")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON array instead of a table")
}

// Main runs `resmongw tools`: exit 0, or 2 for --reads with --writes.
func Main(o Options, stdout, stderr io.Writer) int {
	sel := All
	switch {
	case o.Reads && o.Writes:
		fmt.Fprint(stderr, "resmongw tools: --reads and --writes exclude each other\n\n"+usage)
		return 2
	case o.Reads:
		sel = Reads
	case o.Writes:
		sel = Writes
	}
	if err := Write(stdout, Rows(toolfacts.Rows, sel), o.JSON); err != nil {
		fmt.Fprintf(stderr, "resmongw tools: %v\n", err)
		return 1
	}
	return 0
}
