package toolfacts

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// Where prose must say how many tools there are, it says the table's numbers: each phrase
// below, wherever README.md or DEVELOPERS.md uses it, counts what the table has.
func TestProseCountsMatchTheTable(t *testing.T) {
	total, reads, writes := len(Rows), len(ReadTools()), len(WriteTools())
	phrases := []struct {
		re   *regexp.Regexp
		want []int // one per group
	}{
		{regexp.MustCompile(`(\d+) MCP tools`), []int{total}},
		{regexp.MustCompile(`\b(?:all|the) (\d+) tools`), []int{total}},
		{regexp.MustCompile(`(\d+) tools: (\d+) read, (\d+) write`), []int{total, reads, writes}},
		{regexp.MustCompile(`(\d+) read tools`), []int{reads}},
		{regexp.MustCompile(`(\d+) write tools`), []int{writes}},
		{regexp.MustCompile(`(?:each of|leave|:) the (\d+) writes\b`), []int{writes}},
		{regexp.MustCompile("`--writes=off` lists (\\d+) tools"), []int{reads}},
	}
	for _, file := range []string{"README.md", "DEVELOPERS.md"} {
		text, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, p := range phrases {
			for _, m := range p.re.FindAllStringSubmatch(string(text), -1) {
				found++
				for i, want := range p.want {
					if n, _ := strconv.Atoi(m[i+1]); n != want {
						t.Errorf("%s: %q says %d, the table has %d", file, m[0], n, want)
					}
				}
			}
		}
		if found == 0 {
			t.Errorf("%s: no count of the tools found; if the prose no longer gives one, drop the file here", file)
		}
	}
}
