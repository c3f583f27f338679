package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceSectionKeepsTheRest(t *testing.T) {
	begin, end := SectionMarkers("after")
	b2, e2 := SectionMarkers("before")
	doc := "# Title\n\nprose\n\n" + b2 + "\nold before\n" + e2 + "\n\n" + begin + "\nold tables\n" + end + "\n\nmore prose\n"
	out, err := ReplaceSection([]byte(doc), "after", []byte("\n| new | table |\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nprose\n\n" + b2 + "\nold before\n" + e2 + "\n\n" + begin + "\n| new | table |\n" + end + "\n\nmore prose\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	again, err := ReplaceSection(out, "after", []byte("| new | table |"))
	if err != nil || string(again) != want {
		t.Fatalf("a second run changed the file: %v\n%s", err, again)
	}
}

func TestReplaceSectionNeedsMarkers(t *testing.T) {
	begin, end := SectionMarkers("x")
	for name, doc := range map[string]string{
		"none":     "# doc\n",
		"only one": begin + "\n",
		"reversed": end + "\n" + begin + "\n",
		"twice":    begin + "\n" + end + "\n" + begin + "\n" + end + "\n",
	} {
		if _, err := ReplaceSection([]byte(doc), "x", []byte("t")); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	begin, end := SectionMarkers("latest")
	if err := os.WriteFile(path, []byte("intro\n"+begin+"\n"+end+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(path, "latest", []byte("tables")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "intro\n"+begin+"\ntables\n"+end+"\n" {
		t.Fatalf("file now %q (%v)", b, err)
	}
	if err := WriteSection(path, "missing", []byte("x")); err == nil || !strings.Contains(err.Error(), "benchtable:missing:begin") {
		t.Fatalf("missing section: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}
