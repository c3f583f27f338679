package daemon

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/shim/endpoint"
)

// The shim cannot import discovery, so it keeps its own copy of the key list.
func TestShimForwardsExactlyTheTargetKeys(t *testing.T) {
	if !slices.Equal(endpoint.EnvKeys, discovery.EnvKeys) {
		t.Fatalf("endpoint.EnvKeys %v != discovery.EnvKeys %v", endpoint.EnvKeys, discovery.EnvKeys)
	}
}

func TestReadPreambleBounds(t *testing.T) {
	ok := string(endpoint.Line(endpoint.Preamble{Resmongw: 1, Kind: "mcp", Env: map[string]string{"HOME": "/h"}})) + `{"jsonrpc":"2.0"}` + "\n"
	br := bufio.NewReaderSize(strings.NewReader(ok), 16)
	p, err := readPreamble(br)
	if err != nil || p.Env["HOME"] != "/h" {
		t.Fatalf("good preamble: %+v %v", p, err)
	}
	rest, _ := br.ReadString('\n')
	if rest != `{"jsonrpc":"2.0"}`+"\n" {
		t.Fatalf("bytes after the preamble lost: %q", rest)
	}
	for name, in := range map[string]string{
		"too long":     `{"resmongw":1,"kind":"mcp","client":"` + strings.Repeat("a", endpoint.MaxPreamble) + `"}` + "\n",
		"not json":     "hello\n",
		"old protocol": `{"resmongw":0,"kind":"mcp"}` + "\n",
		"unknown kind": `{"resmongw":1,"kind":"shell"}` + "\n",
		"no newline":   `{"resmongw":1,"kind":"mcp"}`,
	} {
		if _, err := readPreamble(bufio.NewReaderSize(strings.NewReader(in), 4096)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
