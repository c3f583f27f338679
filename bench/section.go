package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// SectionMarkers are the two HTML comment lines that enclose the named generated section of
// a Markdown file: benchtable -o rewrites what lies between them and nothing else, so the
// prose around the tables survives every re-run.
func SectionMarkers(name string) (begin, end string) {
	return "<!-- benchtable:" + name + ":begin -->", "<!-- benchtable:" + name + ":end -->"
}

// ReplaceSection returns doc with the text between the named section's markers replaced by
// body. Each marker must appear exactly once, begin before end.
func ReplaceSection(doc []byte, name string, body []byte) ([]byte, error) {
	begin, end := SectionMarkers(name)
	b, e := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if b < 0 || e < 0 || e < b {
		return nil, fmt.Errorf("no section %q: put a line %s and, below it, a line %s where the tables belong", name, begin, end)
	}
	if bytes.Count(doc, []byte(begin)) != 1 || bytes.Count(doc, []byte(end)) != 1 {
		return nil, fmt.Errorf("section %q is marked more than once", name)
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(begin)])
	out.WriteString("\n")
	out.Write(bytes.TrimSpace(body))
	out.WriteString("\n")
	out.Write(doc[e:])
	return out.Bytes(), nil
}

// WriteSection rewrites the named section of the file at path (temp file + rename, so a
// failed run never leaves half a file).
func WriteSection(path, name string, body []byte) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := ReplaceSection(doc, name, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".benchtable-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		_ = os.Chmod(tmp.Name(), fi.Mode().Perm())
	}
	return os.Rename(tmp.Name(), path)
}
