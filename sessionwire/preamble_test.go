package sessionwire

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/discovery"
)

// FuzzPreamble: any first line is either a valid preamble (our protocol, a known kind) or
// an error; it never panics, never reads past the first newline (the MCP bytes that follow
// belong to the session), and never accepts more than MaxPreamble bytes.
func FuzzPreamble(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 4096)
		p, err := ReadPreamble(br)
		nl := bytes.IndexByte(data, '\n')
		if err != nil {
			if p != nil {
				t.Fatal("a preamble and an error")
			}
			return
		}
		if nl < 0 || nl+1 > MaxPreamble {
			t.Fatalf("accepted a preamble without a newline or over the bound (%d bytes)", nl+1)
		}
		if p.Resmongw != Protocol || (p.Kind != KindMCP && p.Kind != KindStatus) {
			t.Fatalf("accepted %+v", p)
		}
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(rest, data[nl+1:]) {
			t.Fatalf("the bytes after the preamble changed: %q, want %q", rest, data[nl+1:])
		}
		// What the daemon does next with the env must not panic either.
		_ = discovery.TargetFromEnv(func(k string) string { return p.Env[k] }).Key()
	})
}

// The shim cannot import discovery, so it keeps its own copy of the key list.
func TestShimForwardsExactlyTheTargetKeys(t *testing.T) {
	if !slices.Equal(EnvKeys, discovery.EnvKeys) {
		t.Fatalf("EnvKeys %v != discovery.EnvKeys %v", EnvKeys, discovery.EnvKeys)
	}
}

func TestReadPreambleBounds(t *testing.T) {
	ok := string(Line(Preamble{Resmongw: 1, Kind: "mcp", Env: map[string]string{"HOME": "/h"}})) + `{"jsonrpc":"2.0"}` + "\n"
	br := bufio.NewReaderSize(strings.NewReader(ok), 16)
	p, err := ReadPreamble(br)
	if err != nil || p.Env["HOME"] != "/h" {
		t.Fatalf("good preamble: %+v %v", p, err)
	}
	rest, _ := br.ReadString('\n')
	if rest != `{"jsonrpc":"2.0"}`+"\n" {
		t.Fatalf("bytes after the preamble lost: %q", rest)
	}
	for name, in := range map[string]string{
		"too long":     `{"resmongw":1,"kind":"mcp","client":"` + strings.Repeat("a", MaxPreamble) + `"}` + "\n",
		"not json":     "hello\n",
		"old protocol": `{"resmongw":0,"kind":"mcp"}` + "\n",
		"unknown kind": `{"resmongw":1,"kind":"shell"}` + "\n",
		"no newline":   `{"resmongw":1,"kind":"mcp"}`,
	} {
		if _, err := ReadPreamble(bufio.NewReaderSize(strings.NewReader(in), 4096)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
