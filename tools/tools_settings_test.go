package tools

import (
	"context"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resmongw/resmongw/backend"
	"github.com/resmongw/resmongw/backend/backendtest"
	"github.com/resmongw/resmongw/internal/testkit"
	"github.com/resmongw/resmongw/resmonsim"
)

// update_settings: the allowlist, credential-shaped names, unknown keys, boolean fields, the
// before/after diff, and one update per backend and group at a time.

func TestUpdateSettingsGuardsAndReportsTheBackendsOwnDiff(t *testing.T) {
	api := newFakeAPI()
	out, te := callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "low"}})
	backendtest.WantNoErr(t, te)
	reqs := api.requests()
	if got := backendtest.Paths(reqs); !reflect.DeepEqual(got, []string{"GET /api/settings/ai", "PUT /api/settings/ai", "GET /api/settings/ai"}) {
		t.Fatalf("requests = %v", got)
	}
	if !reflect.DeepEqual(reqs[1].Body, map[string]any{"settings": map[string]any{"ai_effort": "low"}}) || !reqs[1].Write {
		t.Errorf("PUT = %+v", reqs[1])
	}
	o := ValMap(out)
	if !reflect.DeepEqual(o["changed"], map[string]any{"ai_effort": map[string]any{"from": "high", "to": "low"}}) ||
		o["unchanged_key_count"] != 4 || !reflect.DeepEqual(o["requested"], []string{"ai_effort"}) || o["group"] != "ai" {
		t.Errorf("answer = %v", o)
	}

	// Booleans: the notifications group holds a JSON boolean; every spelling arrives as one.
	for _, v := range []any{"false", "TRUE", false, true, " False "} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": v}})
		backendtest.WantNoErr(t, te)
		reqs := api.requests()
		if len(reqs) != 3 || reqs[1].Method != http.MethodPut {
			t.Fatalf("%#v: requests = %v", v, backendtest.Paths(reqs))
		}
		sent := ValMap(ValMap(reqs[1].Body)["settings"])["notify_manual"]
		want, _ := parseFlag(v)
		if sent != want {
			t.Errorf("%#v sent as %#v", v, sent)
		}
		if got := api.settings["notifications"]["notify_manual"]; got != want {
			t.Errorf("%#v stored as %v", v, got)
		}
	}
	api = newFakeAPI()
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": "maybe", "notify_automatic_mode": "none"}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'notify_manual' requires true or false.")
	if got := backendtest.Paths(api.requests()); !reflect.DeepEqual(got, []string{"GET /api/settings/notifications"}) {
		t.Errorf("refused boolean still wrote: %v", got)
	}

	// String fields keep the renderer's "true"/"false" convention for a JSON boolean.
	api = newFakeAPI()
	out, _ = callTool(t, api, "update_settings", map[string]any{"group": "cloud", "settings": map[string]any{"cloud_auto_backup": true}})
	if sent := ValMap(ValMap(api.requests()[1].Body)["settings"])["cloud_auto_backup"]; sent != "true" {
		t.Errorf("string field sent %#v", sent)
	}
	if c := ValMap(ValMap(out)["changed"])["cloud_auto_backup"]; !reflect.DeepEqual(c, map[string]any{"from": "false", "to": "true"}) {
		t.Errorf("diff = %v", c)
	}

	// Credential-shaped names: refused with no request and without echoing the value.
	for _, key := range []string{"api_key", "ANTHROPIC_TOKEN", "smtp_password", "client_secret", "my_passphrase", "credential_store", "auth_header", "hotkey"} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{key: "sk-real-value", "ai_effort": "low"}})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "looks like a credential")
		if !reflect.DeepEqual(te.Detail["refused_keys"], []string{key}) {
			t.Errorf("%s: refused_keys = %v", key, te.Detail["refused_keys"])
		}
		if strings.Contains(mustJSON(t, te), "sk-real-value") || len(api.requests()) != 0 {
			t.Errorf("%s: value echoed or request made", key)
		}
	}
	// Groups outside the allowlist: no request.
	for _, g := range []string{"credentials", "advanced", "execution", "", "AI"} {
		api := newFakeAPI()
		_, te := callTool(t, api, "update_settings", map[string]any{"group": g, "settings": map[string]any{"x": "1"}})
		if te == nil || te.Code != backend.CodeInvalidArgument || len(api.requests()) != 0 {
			t.Errorf("group %q: %v, %d requests", g, te, len(api.requests()))
		}
		if g == "execution" && !strings.Contains(te.Message, "decision about the machine") {
			t.Errorf("execution refusal lacks its reason: %s", te.Message)
		}
		if g == "advanced" && te.Message != "'advanced' is not a settings group this tool can change. Allowed: ai, assistant, email, embeddings, cloud, storage, notifications." {
			t.Errorf("message = %s", te.Message)
		}
	}
	for _, c := range []struct {
		settings any
		want     string
	}{
		{nil, "'settings' must be a non-empty object."},
		{map[string]any{}, "'settings' must be a non-empty object."},
		{"ai_effort=low", "'settings' must be an object, not a string."},
		{[]any{"x"}, "'settings' must be an object, not an array."},
	} {
		_, te := callTool(t, newFakeAPI(), "update_settings", map[string]any{"group": "ai", "settings": c.settings})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, c.want)
	}

	// Unknown keys: refused, not dropped; no PUT.
	api = newFakeAPI()
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_provder": "x", "ai_effort": "low"}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "The 'ai' group has no setting called 'ai_provder'.")
	if !reflect.DeepEqual(te.Detail["unknown_keys"], []string{"ai_provder"}) || !reflect.DeepEqual(te.Detail["group_keys"], sortedKeys(api.settings["ai"])) {
		t.Errorf("detail = %v", te.Detail)
	}
	if len(api.requests()) != 1 {
		t.Errorf("requests = %v", backendtest.Paths(api.requests()))
	}

	// A no-op.
	api = newFakeAPI()
	out, te = callTool(t, api, "update_settings", map[string]any{"group": "storage", "settings": map[string]any{"pdf_policy": "save"}})
	backendtest.WantNoErr(t, te)
	if o := ValMap(out); !reflect.DeepEqual(o["changed"], map[string]any{}) || !strings.Contains(o["detail"].(string), "Nothing changed") {
		t.Errorf("no-op = %v", o)
	}

	// Embeddings: the writable map is the nested one; capability is not a setting.
	api = newFakeAPI()
	out, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "nomic"}})
	backendtest.WantNoErr(t, te)
	if c := ValMap(ValMap(out)["changed"]); len(c) != 1 || c["embedding_model"] == nil {
		t.Errorf("embeddings diff = %v", c)
	}
	_, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"capability": "x"}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "no setting called 'capability'")
	flat := newFakeAPI()
	flat.override = func(r *backend.Request) (any, error, bool) {
		return decodeJSONText(`{"anything":"x","id":1}`), nil, true
	}
	_, te = callTool(t, flat, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "n"}})
	backendtest.WantErr(t, te, backend.CodeUpstreamError, "resmon did not return embedding settings.")
	notObject := newFakeAPI()
	notObject.override = func(*backend.Request) (any, error, bool) { return []any{}, nil, true }
	_, te = callTool(t, notObject, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "n"}})
	backendtest.WantErr(t, te, backend.CodeUpstreamError, "resmon did not return the 'ai' settings group.")
	_, te = callTool(t, newFakeAPI(), "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": []any{"x"}}})
	backendtest.WantErr(t, te, backend.CodeInvalidArgument, "'ai_effort' takes a text value.")
}

// settingsBackend is a tiny stateful settings group whose PUT can be held open, to interleave
// two update_settings calls the way a harness pipelining requests in one session does.
type settingsBackend struct {
	mu            sync.Mutex
	values        map[string]any
	log           []string
	holdPUT       chan struct{} // the first PUT waits for this to close
	putSeen       chan struct{} // closed when the first PUT arrives
	putCount      int
	backend.Turns // one backend instance's turns, as the Upstream keeps them
}

func (b *settingsBackend) Call(ctx context.Context, r *backend.Request) (any, error) {
	b.mu.Lock()
	b.log = append(b.log, r.Method)
	switch r.Method {
	case http.MethodGet:
		out := map[string]any{}
		for k, v := range b.values {
			out[k] = v
		}
		b.mu.Unlock()
		return out, nil
	case http.MethodPut:
		b.putCount++
		first := b.putCount == 1
		for k, v := range r.Body.(map[string]any)["settings"].(map[string]any) {
			b.values[k] = v
		}
		b.mu.Unlock()
		if first && b.putSeen != nil {
			close(b.putSeen)
			select {
			case <-b.holdPUT:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]any{"success": true}, nil
	}
	b.mu.Unlock()
	return nil, backend.NewError(backend.CodeNotFound, "no", nil)
}

func TestUpdateSettingsDiffIsNotAnotherCallsChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := &settingsBackend{
		values:  map[string]any{"ai_model": "a", "ai_effort": "high"},
		holdPUT: make(chan struct{}), putSeen: make(chan struct{}),
	}
	type result struct {
		out any
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		out, err := toolUpdateSettings(ctx, b, map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "low"}})
		first <- result{out, err}
	}()
	select {
	case <-b.putSeen:
	case <-ctx.Done():
		t.Fatal("first PUT never arrived")
	}
	go func() {
		out, err := toolUpdateSettings(ctx, b, map[string]any{"group": "ai", "settings": map[string]any{"ai_model": "b"}})
		second <- result{out, err}
	}()
	// Give the second call every chance to run ahead if it were not serialised; then release.
	time.Sleep(50 * time.Millisecond)
	b.mu.Lock()
	methodsWhileHeld := len(b.log)
	b.mu.Unlock()
	close(b.holdPUT)

	changedKeys := func(r result) []string {
		if r.err != nil {
			t.Fatalf("update_settings: %v", r.err)
		}
		return sortedKeys(r.out.(map[string]any)["changed"].(map[string]any))
	}
	r1, r2 := <-first, <-second
	if got := changedKeys(r1); len(got) != 1 || got[0] != "ai_effort" {
		t.Errorf("first call's diff = %v, want only ai_effort", got)
	}
	if got := changedKeys(r2); len(got) != 1 || got[0] != "ai_model" {
		t.Errorf("second call's diff = %v, want only ai_model", got)
	}
	if methodsWhileHeld != 2 { // the first call's GET and PUT; the second must not have started
		t.Errorf("%d backend requests while the first update was in flight, want 2 (GET, PUT)", methodsWhileHeld)
	}
}

func TestUpdateSettingsWaitingTurnHonoursCancellation(t *testing.T) {
	b := &settingsBackend{values: map[string]any{"smtp_server": ""}}
	turn := b.Turn("email")
	turn <- struct{}{} // someone else holds the group on this backend
	defer func() { <-turn }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := toolUpdateSettings(ctx, b, map[string]any{"group": "email", "settings": map[string]any{"smtp_server": "x"}})
	te, ok := err.(*backend.ToolError)
	if !ok || te.Code != backend.CodeBackendUnavailable {
		t.Fatalf("err = %v, want backend_unavailable after the caller gave up", err)
	}
	if len(b.log) != 0 {
		t.Errorf("requests sent while waiting for the turn: %v", b.log)
	}
}

// The turn is per backend: a group held on one instance does not hold up another instance.
func TestUpdateSettingsTurnIsPerBackend(t *testing.T) {
	busy := &settingsBackend{values: map[string]any{"smtp_server": ""}}
	turn := busy.Turn("email")
	turn <- struct{}{}
	defer func() { <-turn }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	other := &settingsBackend{values: map[string]any{"smtp_server": ""}}
	out, err := toolUpdateSettings(ctx, other, map[string]any{"group": "email", "settings": map[string]any{"smtp_server": "x"}})
	if err != nil {
		t.Fatalf("another backend's update waited on the busy one: %v", err)
	}
	if got := sortedKeys(out.(map[string]any)["changed"].(map[string]any)); len(got) != 1 || got[0] != "smtp_server" {
		t.Fatalf("changed = %v", got)
	}
}

// TestSettingsToolsAgainstTheSimulator: every settings tool through the real HTTP client against an in-process simulator.
func TestSettingsToolsAgainstTheSimulator(t *testing.T) {
	sim, api := backendtest.StartSimClient(t, resmonsim.Options{RunDuration: time.Hour})
	t.Run("update_settings", func(t *testing.T) {
		out, te := callTool(t, api, "update_settings", map[string]any{"group": "notifications", "settings": map[string]any{"notify_manual": "False"}})
		backendtest.WantNoErr(t, te)
		c := ValMap(ValMap(out)["changed"])["notify_manual"]
		if !(ValMap(c)["from"] == true && ValMap(c)["to"] == false) {
			t.Errorf("notify_manual diff = %v (the string \"False\" must turn it off)", c)
		}
		if v := sim.Settings("notifications")["notify_manual"]; v != false {
			t.Errorf("stored notify_manual = %v", v)
		}
		out, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_effort": "low"}})
		backendtest.WantNoErr(t, te)
		if ValMap(ValMap(out)["changed"])["ai_effort"] == nil {
			t.Errorf("ai diff = %v", out)
		}
		_, te = callTool(t, api, "update_settings", map[string]any{"group": "embeddings", "settings": map[string]any{"embedding_model": "nomic-embed-text"}})
		backendtest.WantNoErr(t, te)
		_, te = callTool(t, api, "update_settings", map[string]any{"group": "ai", "settings": map[string]any{"ai_provder": "x"}})
		backendtest.WantErr(t, te, backend.CodeInvalidArgument, "no setting called 'ai_provder'")
	})
}

// update_settings' turns live on the upstream they belong to: once an upstream that ran it is
// closed and dropped, nothing in the package keeps it reachable (they were once in a global
// map that was never pruned).
func TestClosedUpstreamIsNotKeptReachableBySettingsTurns(t *testing.T) {
	f := backendtest.NewFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			backendtest.WriteJSON(w, 200, map[string]any{"success": true})
			return
		}
		backendtest.WriteJSON(w, 200, map[string]any{"smtp_server": "mail.example.org"})
	})
	src := backendtest.NewSource()
	src.Set(f.Backend(), nil)
	collected := make(chan struct{})
	func() {
		u := backend.NewUpstream(src, backendtest.Patient)
		runtime.AddCleanup(u, func(ch chan struct{}) { close(ch) }, collected)
		if _, te := callTool(t, u, "update_settings", map[string]any{"group": "email", "settings": map[string]any{"smtp_server": "x"}}); te != nil {
			t.Fatalf("update_settings: %v", te)
		}
		u.Close()
	}()
	testkit.WaitFor(t, backendtest.Timeout, func() bool {
		runtime.GC()
		select {
		case <-collected:
			return true
		default:
			return false
		}
	}, "the closed upstream to be collected (it is still reachable after update_settings ran on it)")
}
