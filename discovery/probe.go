package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resmongw/resmongw/internal/lazyre"
)

// maxHealthBody bounds the health answer we read; a real one is a few hundred bytes.
const maxHealthBody = 1 << 20

// probeOutcome classifies one GET /api/health.
type probeOutcome int

const (
	probeTransport   probeOutcome = iota // no HTTP answer: next candidate, silently
	probeUntrusted                       // the listener belongs to another user: nothing sent
	probeRefused                         // 401: the token is not this backend's
	probeOtherStatus                     // any other non-200: skipped
	probeBadBody                         // 200 but not a JSON object
	probeVersionLow                      // 200, version absent, unparseable or too old
	probeOK                              // verified
)

type probeResult struct {
	outcome  probeOutcome
	status   int
	reason   string    // the guard's detail.reason on a refusal, when it sent one
	version  string    // as sent, trimmed ("" when absent or not a string)
	identity *Identity // nil when absent or malformed
	idNote   string    // why a present identity was dropped
	err      error     // transport error, for the chain line

	simulated bool // health said "simulated": true (the built-in simulator)
	pid       int  // health's "pid", 0 when absent or not a positive integer
}

// probeHealth sends GET <base>/api/health the way the reference does: IP-literal Host,
// Bearer token, no Origin (so the guard judges the token alone), one fresh transport with
// keep-alives off and no proxy (a proxy would see the token and break the Host rule).
func probeHealth(ctx context.Context, port int, tok Token, timeout time.Duration, minVer []int) probeResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		// The listener's owner is checked before the request (and its token) is written.
		DialContext:         (&VerifiedDialer{Dialer: net.Dialer{Timeout: timeout}}).DialContext,
		TLSHandshakeTimeout: timeout,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		// Never follow a redirect: the token must go to this port and nowhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort+"/api/health", nil)
	if err != nil {
		return probeResult{outcome: probeTransport, err: err}
	}
	req.Host = hostPort
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "resmongw")
	resp, err := client.Do(req)
	var ule *UntrustedListenerError
	if errors.As(err, &ule) {
		return probeResult{outcome: probeUntrusted, err: ule}
	}
	if err != nil {
		return probeResult{outcome: probeTransport, err: describeTransportErr(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody+1))
	if err != nil {
		return probeResult{outcome: probeTransport, status: resp.StatusCode, err: describeTransportErr(err)}
	}
	res := probeResult{status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		res.outcome, res.reason = probeRefused, refusalReason(body)
		return res
	case resp.StatusCode != http.StatusOK:
		res.outcome, res.reason = probeOtherStatus, refusalReason(body)
		return res
	}
	var obj map[string]json.RawMessage
	if len(body) > maxHealthBody || json.Unmarshal(body, &obj) != nil || obj == nil {
		res.outcome = probeBadBody
		return res
	}
	res.version = stringField(obj["version"])
	if !versionAtLeast(res.version, minVer) {
		res.outcome = probeVersionLow
		return res
	}
	if raw, ok := obj["identity"]; ok && !isJSONNull(raw) {
		id, why := parseIdentity(raw)
		if id == nil {
			res.idNote = "health answer carries a malformed identity (" + why + "); treated as no identity"
		}
		res.identity = id
	}
	res.simulated = string(obj["simulated"]) == "true"
	if pid, err := strconv.Atoi(string(obj["pid"])); err == nil && pid > 0 {
		res.pid = pid
	}
	res.outcome = probeOK
	return res
}

// describeTransportErr drops the URL from a *url.Error: the message stays short and the
// base is already on the chain line.
func describeTransportErr(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

var reasonCode = lazyre.New(`^[a-z_]{1,40}$`)

// refusalReason is detail.reason of a guard refusal body, or "".
func refusalReason(body []byte) string {
	var r struct {
		Detail struct {
			Reason string `json:"reason"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	if !reasonCode().MatchString(r.Detail.Reason) {
		return "" // only echo something that looks like a reason code
	}
	return r.Detail.Reason
}

func stringField(raw json.RawMessage) string {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	s = strings.TrimSpace(s)
	if len(s) > 64 {
		s = s[:64] + "…" // a version is short; a long one is junk and still refused
	}
	return s
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// parseVersion splits a version into its first three dot-separated parts, each of which
// must be a decimal integer, as the reference's tuple(int(p) for p in v.split(".")[:3]).
// "v2.3.0" and "2.3.0-beta" fail, like int() does.
func parseVersion(v string) ([]int, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, false
	}
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	out := make([]int, 0, 3)
	for _, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return nil, false
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// versionAtLeast compares like Python tuples: element by element, and a shorter tuple
// that is a prefix of the other is smaller, so "1.8" < (1,8,0) is refused.
func versionAtLeast(v string, min []int) bool {
	got, ok := parseVersion(v)
	if !ok {
		return false
	}
	for i := 0; i < len(got) && i < len(min); i++ {
		if got[i] != min[i] {
			return got[i] > min[i]
		}
	}
	return len(got) >= len(min)
}

var runtimeIDPattern = lazyre.New(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

var jsonInt = lazyre.New(`^-?(0|[1-9][0-9]*)$`)

// ValidRuntimeID reports whether v is a canonical lowercase UUID4 (reference §7.2).
func ValidRuntimeID(v string) bool { return runtimeIDPattern().MatchString(v) }

// parseIdentity applies valid_identity (reference §7.2): an object with at least the five
// keys, contract_version exactly the integer 1 (not true, not 1.0), a canonical UUID4
// runtime_id, schema_version null or an integer, corpus_id and build_id null. It returns
// nil and a short reason when the identity is not valid.
func parseIdentity(raw json.RawMessage) (*Identity, string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, "not an object"
	}
	for _, k := range []string{"contract_version", "runtime_id", "schema_version", "corpus_id", "build_id"} {
		if _, ok := obj[k]; !ok {
			return nil, "missing " + k
		}
	}
	if string(bytes.TrimSpace(obj["contract_version"])) != "1" {
		return nil, "contract_version is not 1"
	}
	var rid string
	if json.Unmarshal(obj["runtime_id"], &rid) != nil || !ValidRuntimeID(rid) {
		return nil, "runtime_id is not a canonical lowercase UUID4"
	}
	id := &Identity{ContractVersion: 1, RuntimeID: rid}
	if sv := string(bytes.TrimSpace(obj["schema_version"])); sv != "null" {
		n, err := strconv.Atoi(sv)
		if !jsonInt().MatchString(sv) || err != nil {
			return nil, "schema_version is not null or an integer"
		}
		id.SchemaVersion = &n
	}
	if !isJSONNull(obj["corpus_id"]) {
		return nil, "corpus_id is not null"
	}
	if !isJSONNull(obj["build_id"]) {
		return nil, "build_id is not null"
	}
	return id, ""
}

// describeProbe is the chain line for one probe, e.g.
// "GET http://127.0.0.1:9001/api/health → 401 token_invalid".
func describeProbe(base string, r probeResult) string {
	head := "GET " + base + "/api/health → "
	switch r.outcome {
	case probeTransport:
		return head + fmt.Sprintf("no answer (%v)", r.err)
	case probeUntrusted:
		return "GET " + base + "/api/health not sent: " + r.err.Error()
	case probeRefused, probeOtherStatus:
		s := head + strconv.Itoa(r.status)
		if r.reason != "" {
			s += " " + r.reason
		}
		return s
	case probeBadBody:
		return head + "200, but the body is not a JSON object"
	case probeVersionLow:
		return head + "200, version " + versionLabel(r.version) + " (below the minimum)"
	default:
		s := head + "200, version " + r.version
		if r.identity != nil {
			s += ", runtime " + r.identity.RuntimeID
		} else {
			s += ", no identity"
		}
		return s
	}
}

func versionLabel(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
