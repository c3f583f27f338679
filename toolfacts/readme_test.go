package toolfacts

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update", false, "rewrite README.md's tool table from the rows")

const (
	readmeTableStart = "<!-- The table below is the rows' (toolfacts.Rows): go test ./toolfacts -run TestReadmeToolTable -update rewrites it. -->\n"
	readmeTableEnd   = "<!-- end of the tool table -->\n"
)

// readmeTable is the README's tool table: each row's name, access and Summary, in order.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| Tool | R/W | What it does |\n|---|---|---|\n")
	for _, r := range Rows {
		access := "read"
		if r.RequiresConfirmation {
			access = "**write**"
		}
		b.WriteString("| `" + r.Name + "` | " + access + " | " + r.Summary + ". |\n")
	}
	return b.String()
}

// The README's tool table is the rows': a tool added, removed, renamed or reworded in the table
// is so in the README (regenerated with -update, like any golden).
func TestReadmeToolTable(t *testing.T) {
	path := filepath.Join("..", "README.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i, j := strings.Index(s, readmeTableStart), strings.Index(s, readmeTableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no generated tool table (the lines %q and %q around it)", readmeTableStart, readmeTableEnd)
	}
	got, want := s[i+len(readmeTableStart):j], readmeTable()
	if got == want {
		return
	}
	if !*updateReadme {
		t.Fatalf("README.md's tool table is not the rows'; run go test ./toolfacts -run TestReadmeToolTable -update and read the diff.\nwant:\n%s", want)
	}
	if err := os.WriteFile(path, []byte(s[:i+len(readmeTableStart)]+want+s[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
