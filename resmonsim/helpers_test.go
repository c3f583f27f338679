package resmonsim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/spf13/pflag"
)

// TestMain doubles as the helper process for the real-process test of Main.
func TestMain(m *testing.M) {
	testkit.RunHelper(mainHelper, func(arg string) int {
		var args []string
		_ = json.Unmarshal([]byte(arg), &args)
		var o CommandOptions
		fs := pflag.NewFlagSet("dev backend", pflag.ContinueOnError)
		BindFlags(fs, &o)
		if err := fs.Parse(args); err != nil {
			return 2
		}
		return Main(o, os.Stderr, os.ReadFile)
	})
	testkit.Exit(m.Run())
}

func startSim(t *testing.T, opts Options) *Sim {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func (r resp) list(t *testing.T) []any {
	t.Helper()
	var l []any
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatalf("body is not a JSON array: %v: %s", err, r.body)
	}
	return l
}

var client = &http.Client{Timeout: 10 * time.Second}

// send makes one request; mod may adjust it (Host, extra headers). A nil token sends none.
func send(t *testing.T, base, token, method, path string, body any, mod ...func(*http.Request)) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, m := range mod {
		m(req)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// do is send with the simulator's current token.
func do(t *testing.T, s *Sim, method, path string, body any, mod ...func(*http.Request)) resp {
	t.Helper()
	return send(t, s.BaseURL(), s.Token(), method, path, body, mod...)
}

func wantStatus(t *testing.T, r resp, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
}

func wantBody(t *testing.T, r resp, body string) {
	t.Helper()
	if string(r.body) != body {
		t.Fatalf("body\n got %s\nwant %s", r.body, body)
	}
}
