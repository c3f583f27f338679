package packaging

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unitFile is a parsed systemd unit: section -> key -> values (in order).
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, text string) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("unit line %d is neither a section nor key=value: %q", n+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// execArgv splits an ExecStart value the way systemd does for our subset: words separated
// by spaces, "double quotes" grouping, \x20 standing for a space.
func execArgv(v string) []string {
	var argv []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			inQuote, have = !inQuote, true
		case c == '\\' && strings.HasPrefix(v[i:], `\x20`):
			cur.WriteByte(' ')
			i += 3
			have = true
		case c == '\\' && i+1 < len(v):
			i++
			cur.WriteByte(v[i])
			have = true
		case c == ' ' && !inQuote:
			if have {
				argv = append(argv, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		argv = append(argv, cur.String())
	}
	return argv
}

func TestRenderUnit(t *testing.T) {
	for _, bin := range []string{"/usr/local/bin/resmongw", "/home/a b/go/bin/resmongw"} {
		text, err := RenderUnit(bin)
		if err != nil {
			t.Fatal(err)
		}
		u := parseUnit(t, text)
		for _, sec := range []string{"Unit", "Service", "Install"} {
			if u[sec] == nil {
				t.Fatalf("no [%s] section in:\n%s", sec, text)
			}
		}
		exec := u["Service"]["ExecStart"]
		if len(exec) != 1 {
			t.Fatalf("want one ExecStart, got %q", exec)
		}
		argv := execArgv(exec[0])
		if len(argv) != 2 || argv[0] != bin || argv[1] != "serve" {
			t.Errorf("ExecStart %q runs %q, want [%s serve]", exec[0], argv, bin)
		}
		if !filepath.IsAbs(argv[0]) {
			t.Errorf("ExecStart binary %q is not absolute", argv[0])
		}
		want := map[[2]string]string{
			{"Install", "WantedBy"}:   "default.target",
			{"Service", "Restart"}:    "on-failure",
			{"Service", "RestartSec"}: "2",
			{"Service", "Type"}:       "simple",
		}
		for k, v := range want {
			if got := u[k[0]][k[1]]; len(got) != 1 || got[0] != v {
				t.Errorf("[%s] %s = %q, want %q", k[0], k[1], got, v)
			}
		}
		if got := u["Unit"]["Description"]; len(got) != 1 || got[0] != serviceDescription {
			t.Errorf("Description = %q", got)
		}
		// kardianos' default template has these wrong for user units.
		for _, bad := range []string{"multi-user.target", "RestartSec=120", "EnvironmentFile", "{{", "}}"} {
			if strings.Contains(text, bad) {
				t.Errorf("unit contains %q:\n%s", bad, text)
			}
		}
	}
}

func TestRenderUnitVerifiesWithSystemdAnalyze(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed")
	}
	bin, err := os.Executable() // verify wants ExecStart to name a real executable
	if err != nil {
		t.Fatal(err)
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		t.Fatal(err)
	}
	text, err := RenderUnit(bin)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "resmongw.service")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", file).CombinedOutput()
	if strings.Contains(string(out), "Failed to initialize manager") {
		t.Skipf("systemd-analyze cannot run here: %s", out)
	}
	// verify exits 0 even for unknown keys; any line about our file is a finding.
	if err != nil || strings.Contains(string(out), file) {
		t.Fatalf("systemd-analyze verify: %v\n%s\nunit:\n%s", err, out, text)
	}
}

// plistNode is a generic XML element, enough to walk a property list.
type plistNode struct {
	XMLName  xml.Name
	Text     string      `xml:",chardata"`
	Children []plistNode `xml:",any"`
}

// plistDict turns a <dict> into key -> value element.
func plistDict(t *testing.T, d plistNode) map[string]plistNode {
	t.Helper()
	if d.XMLName.Local != "dict" {
		t.Fatalf("want <dict>, got <%s>", d.XMLName.Local)
	}
	m := map[string]plistNode{}
	for i := 0; i+1 < len(d.Children); i += 2 {
		k := d.Children[i]
		if k.XMLName.Local != "key" {
			t.Fatalf("dict entry %d: want <key>, got <%s>", i/2, k.XMLName.Local)
		}
		m[k.Text] = d.Children[i+1]
	}
	if len(d.Children)%2 != 0 {
		t.Fatal("dict has a key without a value")
	}
	return m
}

func parsePlist(t *testing.T, text string) map[string]plistNode {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(text))
	var root plistNode
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, text)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("trailing content after </plist>: %v %v", tok, err)
		}
	}
	if root.XMLName.Local != "plist" || len(root.Children) != 1 {
		t.Fatalf("want <plist> holding one <dict>, got %+v", root.XMLName)
	}
	return plistDict(t, root.Children[0])
}

func TestRenderPlist(t *testing.T) {
	home := "/Users/Ann & Bob"
	bin := "/Users/Ann & Bob/go/bin/resmon<gw>"
	text, err := RenderPlist(bin, home)
	if err != nil {
		t.Fatal(err)
	}
	d := parsePlist(t, text)
	str := func(k string) string {
		n, ok := d[k]
		if !ok || n.XMLName.Local != "string" {
			t.Fatalf("%s: want a <string>, got %+v", k, n.XMLName)
		}
		return n.Text
	}
	if got := str("Label"); got != "com.resmon.resmongw" {
		t.Errorf("Label = %q", got)
	}
	pa := d["ProgramArguments"]
	var argv []string
	for _, c := range pa.Children {
		argv = append(argv, c.Text)
	}
	if pa.XMLName.Local != "array" || len(argv) != 2 || argv[0] != bin || argv[1] != "serve" {
		t.Errorf("ProgramArguments = <%s> %q, want [%q serve]", pa.XMLName.Local, argv, bin)
	}
	if got := d["RunAtLoad"].XMLName.Local; got != "true" {
		t.Errorf("RunAtLoad = <%s/>, want <true/>", got)
	}
	ka := plistDict(t, d["KeepAlive"])
	if got := ka["SuccessfulExit"].XMLName.Local; got != "false" {
		t.Errorf("KeepAlive.SuccessfulExit = <%s/>, want <false/>", got)
	}
	if ti := d["ThrottleInterval"]; ti.XMLName.Local != "integer" || ti.Text == "" || ti.Text == "0" {
		t.Errorf("ThrottleInterval = <%s>%s", ti.XMLName.Local, ti.Text)
	}
	logDir := home + "/Library/Logs/resmongw/"
	for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
		if got := str(k); !strings.HasPrefix(got, logDir) || !strings.HasSuffix(got, ".log") {
			t.Errorf("%s = %q, want a .log file in %s", k, got, logDir)
		}
	}
	if str("StandardOutPath") == str("StandardErrorPath") {
		t.Error("stdout and stderr share one log file")
	}
}

func TestRenderRefusesPathsAServiceFileCannotCarry(t *testing.T) {
	for _, bin := range []string{"resmongw", "./bin/resmongw", "/opt/$HOME/resmongw", "/opt/100%/resmongw", `/opt/a"b/resmongw`, "/opt/a\nb/resmongw"} {
		if _, err := RenderUnit(bin); err == nil {
			t.Errorf("RenderUnit(%q) succeeded", bin)
		}
		if _, err := RenderPlist(bin, "/Users/a"); err == nil {
			t.Errorf("RenderPlist(%q) succeeded", bin)
		}
	}
	if _, err := RenderPlist("/usr/local/bin/resmongw", "relative/home"); err == nil {
		t.Error("RenderPlist accepted a relative home")
	}
}

func TestTemplateEngine(t *testing.T) {
	data := map[string]any{"A": "x y", "L": []string{"1", "2"}, "E": "", "N": []string(nil)}
	up := map[string]func(string) string{"up": strings.ToUpper}
	got, err := renderTemplate("<{{A | up}}>{{range L}}[{{.}}]{{end}}{{if E}}no{{end}}{{if L}}yes{{end}}{{range N}}never{{end}}.", data, up)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<X Y>[1][2]yes."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"{{Missing}}", "{{A | nope}}", "{{range L}}x", "{{end}}", "{{A"} {
		if _, err := renderTemplate(bad, data, up); err == nil {
			t.Errorf("%q rendered without error", bad)
		}
	}
}
