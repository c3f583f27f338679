package proxy

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// settingsBackend is a tiny stateful settings group whose PUT can be held open, to interleave
// two update_settings calls the way a harness pipelining requests in one session does.
type settingsBackend struct {
	mu       sync.Mutex
	values   map[string]any
	log      []string
	holdPUT  chan struct{} // the first PUT waits for this to close
	putSeen  chan struct{} // closed when the first PUT arrives
	putCount int
}

func (b *settingsBackend) Call(ctx context.Context, r *Request) (any, error) {
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
	return nil, NewError(CodeNotFound, "no", nil)
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
	turn := settingsTurn(b, "email")
	turn <- struct{}{} // someone else holds the group on this backend
	defer func() { <-turn }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := toolUpdateSettings(ctx, b, map[string]any{"group": "email", "settings": map[string]any{"smtp_server": "x"}})
	te, ok := err.(*ToolError)
	if !ok || te.Code != CodeBackendUnavailable {
		t.Fatalf("err = %v, want backend_unavailable after the caller gave up", err)
	}
	if len(b.log) != 0 {
		t.Errorf("requests sent while waiting for the turn: %v", b.log)
	}
}

// The turn is per backend: a group held on one instance does not hold up another instance.
func TestUpdateSettingsTurnIsPerBackend(t *testing.T) {
	busy := &settingsBackend{values: map[string]any{"smtp_server": ""}}
	turn := settingsTurn(busy, "email")
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
