package tooltable

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/toolfacts"
	"github.com/spf13/pflag"
)

func runTools(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var opts Options
	fs := pflag.NewFlagSet("tools", pflag.ContinueOnError)
	BindFlags(fs, &opts)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code := Main(opts, &o, &e)
	return code, o.String(), e.String()
}

// Every tool of the table is printed once, in the table's order, marked read or write exactly
// as requires_confirmation says.
func TestToolsPrintsEveryToolOnceWithItsAccess(t *testing.T) {
	code, out, errOut := runTools(t)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(toolfacts.Rows)+1 || !strings.HasPrefix(lines[0], "TOOL") {
		t.Fatalf("want a header and %d rows, got:\n%s", len(toolfacts.Rows), out)
	}
	for i, tool := range toolfacts.Rows {
		f := strings.Fields(lines[i+1])
		want := "read"
		if tool.RequiresConfirmation {
			want = "write"
		}
		if len(f) < 3 || f[0] != tool.Name || f[1] != want {
			t.Errorf("row %d = %q, want %s %s …", i, lines[i+1], tool.Name, want)
		}
	}
}

// Scripts get the same split as the app's READ_TOOLS and WRITE_TOOLS, from the one table.
func TestToolsJSONGivesTheReadAndWriteLists(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want []string
	}{
		{"--reads", toolfacts.ReadTools()},
		{"--writes", toolfacts.WriteTools()},
	} {
		code, out, errOut := runTools(t, tc.flag, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.flag, code, errOut)
		}
		var rows []Row
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", tc.flag, err, out)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
			if r.Summary == "" || strings.Contains(r.Summary, "\n") {
				t.Errorf("%s: %s has summary %q, want one non-empty line", tc.flag, r.Name, r.Summary)
			}
			if r.RequiresConfirmation != (r.Access == "write") {
				t.Errorf("%s: %s: access %q but requires_confirmation %v", tc.flag, r.Name, r.Access, r.RequiresConfirmation)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%s --json names = %v, want %v", tc.flag, names, tc.want)
		}
	}
}

// The table's layout, byte for byte, on a table of our own (the real summaries belong to the
// tool rows and may be reworded).
func TestToolsTableLayout(t *testing.T) {
	table := []toolfacts.Row{
		{Name: "health", Description: "Whether it runs. Pass an id to pin it."},
		{Name: "update_settings", Summary: "Change settings in one group.", Description: "Long text. More.", RequiresConfirmation: true},
	}
	var b bytes.Buffer
	if err := Write(&b, Rows(table, All), false); err != nil {
		t.Fatal(err)
	}
	want := "TOOL             R/W    WHAT IT DOES\n" +
		"health           read   Whether it runs.\n" +
		"update_settings  write  Change settings in one group.\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", b.String(), want)
	}
	b.Reset()
	if err := Write(&b, Rows(table, Writes), true); err != nil {
		t.Fatal(err)
	}
	wantJSON := `[
  {
    "name": "update_settings",
    "access": "write",
    "requires_confirmation": true,
    "summary": "Change settings in one group."
  }
]
`
	if b.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), wantJSON)
	}
}

func TestSummaryFallsBackToTheFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Search papers resmon has already collected. mode 'keyword' filters.": "Search papers resmon has already collected.",
		"One line without a full stop":                                        "One line without a full stop",
		"Ends here.":                                                          "Ends here.",
		"Spans\n  two lines. Then more.":                                      "Spans two lines.",
		"Version 2.3 answers. Rest.":                                          "Version 2.3 answers.",
	} {
		if got := FirstSentence(in); got != want {
			t.Errorf("FirstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// --reads with --writes is a usage error; unknown flags, arguments and -h are cobra's
// (cmd/resmongw TestUsageErrorsExitTwo, TestHelpOnEveryCommandExitsZero).
func TestToolsReadsWithWritesIsAUsageError(t *testing.T) {
	code, out, errOut := runTools(t, "--reads", "--writes")
	if code != 2 || out != "" || !strings.Contains(errOut, "Usage: resmongw tools") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
