package discovery

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resmongw/resmongw/internal/testkit"
)

// Fuzz targets for everything discovery reads from files or the network: the port file,
// RESMON_PORT, the token file and the health answer. Seeds live in testdata/fuzz/<name>/;
// plain `go test` runs them as regression cases.

// FuzzPortFile: whatever the port file holds, discovery either names one port in 1–65535
// that is exactly the file's number, or says the file is bad; a bad file is never widened
// to the default port, and the message never quotes a token-shaped value.
func FuzzPortFile(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, PortFileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		port, present, blank, err := readPortFile(path)
		trimmed := strings.TrimSpace(string(data))
		switch {
		case err != nil:
			if present || blank {
				t.Fatalf("error %v with present=%v blank=%v", err, present, blank)
			}
			if tokenPattern().MatchString(trimmed) && strings.Contains(err.Error(), trimmed) {
				t.Fatal("the error quotes a token-shaped port file")
			}
		case present:
			if port < 1 || port > 65535 || strconv.Itoa(port) != strings.TrimLeft(trimmed, "0") {
				t.Fatalf("port %d from %q", port, data)
			}
		case blank:
			if trimmed != "" {
				t.Fatalf("blank for %q", data)
			}
		default:
			t.Fatalf("no port, no error, not blank for %q", data)
		}

		r := Resolved{StateDir: dir, PortFile: path, PortFileSource: "state_dir"}
		cands, bad := Candidates(Target{}, r)
		switch {
		case err != nil:
			if bad == nil || bad.Reason != ReasonBadPortFile || len(cands) != 0 {
				t.Fatalf("bad port file %q: candidates %v, unavailable %v", data, cands, bad)
			}
		case present:
			if bad != nil || len(cands) != 1 || cands[0].Port != port || cands[0].Source != SourcePortFile {
				t.Fatalf("port file %q: candidates %v, unavailable %v", data, cands, bad)
			}
		default:
			if bad != nil || len(cands) != 1 || cands[0].Source != SourceDefault {
				t.Fatalf("empty port file %q: candidates %v, unavailable %v", data, cands, bad)
			}
		}
	})
}

// FuzzPortEnv: a set RESMON_PORT is either the first candidate, exactly, or refused as
// bad_port_env; it never falls back to the default (that could be another installation).
func FuzzPortEnv(f *testing.F) {
	dir := f.TempDir()
	r := Resolved{StateDir: dir, PortFile: filepath.Join(dir, "absent.port"), PortFileSource: "state_dir"}
	f.Fuzz(func(t *testing.T, env string) {
		if env == "" {
			return // unset: the default rule applies, covered by the discovery tests
		}
		cands, bad := Candidates(Target{Port: env}, r)
		p, ok := parsePort(env)
		if !ok {
			if bad == nil || bad.Reason != ReasonBadPortEnv || len(cands) != 0 {
				t.Fatalf("RESMON_PORT=%q: candidates %v, unavailable %v", env, cands, bad)
			}
			if tokenPattern().MatchString(strings.TrimSpace(env)) && strings.Contains(bad.Message, strings.TrimSpace(env)) {
				t.Fatal("the message quotes a token-shaped RESMON_PORT")
			}
			return
		}
		if p < 1 || p > 65535 || bad != nil || len(cands) != 1 || cands[0] != (Candidate{Port: p, Source: SourceEnv}) {
			t.Fatalf("RESMON_PORT=%q: candidates %v, unavailable %v", env, cands, bad)
		}
	})
}

// FuzzTokenFile: a token file yields a token only when it holds exactly one well-formed
// token (after trimming); errors never carry the file's content.
func FuzzTokenFile(f *testing.F) {
	dir := f.TempDir()
	const port = 9001
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(TokenFile(dir, port), data, 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := ReadToken(dir, port)
		trimmed := strings.TrimSpace(string(data))
		if err != nil {
			if tok != "" {
				t.Fatal("a token and an error")
			}
			// Token-alphabet text of 16+ bytes is secret-shaped (scrub registers it); it must
			// never be echoed, unless it happens to be part of the path itself.
			if len(trimmed) >= 16 && tokenAlphabet().MatchString(trimmed) &&
				strings.Contains(err.Error(), trimmed) && !strings.Contains(TokenFile(dir, port), trimmed) {
				t.Fatalf("the error %q carries the file's content", err)
			}
			return
		}
		if tok.Reveal() != trimmed || !tokenPattern().MatchString(tok.Reveal()) {
			t.Fatalf("accepted a malformed token from %q", data)
		}
		if tok.String() != "[redacted]" {
			t.Fatal("a token prints")
		}
	})
}

// FuzzHealthAnswer: whatever a port answers to GET /api/health, the probe never panics and
// only verifies a body that is a JSON object with a version ≥ 1.8.0; an identity it keeps
// is always a valid one.
func FuzzHealthAnswer(f *testing.F) {
	var body []byte
	var status int
	srv, port := testkit.ServeLoopback(f, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	f.Cleanup(srv.Close)
	minVer, _ := parseVersion(MinBackendVersion)
	tok := Token(strings.Repeat("a", 43))

	// The fuzz function runs serially in one worker, so the handler's captured body and
	// status are not shared between concurrent requests.
	f.Fuzz(func(t *testing.T, st uint16, answer []byte) {
		status = 200
		if st%4 == 1 {
			status = int(100 + st%500) // mostly 200, sometimes any status
			if status < 200 || status == 204 || status == 304 {
				status = 200 // informational and no-body statuses cannot carry the fuzz body
			}
		}
		body = answer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res := probeHealth(ctx, port, tok, 3*time.Second, minVer)
		if res.outcome == probeTransport {
			t.Fatalf("transport failure against a live server: %v", res.err)
		}
		if status != 200 {
			if res.outcome != probeRefused && res.outcome != probeOtherStatus {
				t.Fatalf("status %d: outcome %v", status, res.outcome)
			}
			if res.reason != "" && !reasonCode().MatchString(res.reason) {
				t.Fatalf("reason %q echoed", res.reason)
			}
			return
		}
		if res.outcome == probeOK {
			if !versionAtLeast(res.version, minVer) {
				t.Fatalf("verified version %q", res.version)
			}
			if res.identity != nil && !ValidRuntimeID(res.identity.RuntimeID) {
				t.Fatalf("kept identity %+v", res.identity)
			}
		}
		_ = describeProbe("http://127.0.0.1:"+strconv.Itoa(port), res)
	})
}
