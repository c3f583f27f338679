package proxy

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// update_settings: the one tool that overwrites existing values. Four structural guards, each
// before any later step: a group allowlist; credential-shaped key names refused before any
// request; legal keys read from the backend (unknown keys refused, never dropped); and an
// answer that is the backend's own before/after state, not an echo of the input.

// settingsGroups is the allowlist, in the contract's order.
var settingsGroups = []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"}

const settingsGroupList = "ai, assistant, email, embeddings, cloud, storage, notifications"

// settingsTurns holds one single-slot semaphore per backend and group (see toolUpdateSettings).
// The backend is the API value the tool was called with (the daemon's per-target upstream), so
// a slow instance never holds up another instance's settings.
var settingsTurns sync.Map // settingsTurnKey -> chan struct{}

type settingsTurnKey struct {
	api   any // the API when its dynamic type is comparable (every real one is a pointer), else nil
	group string
}

func settingsTurn(api API, group string) chan struct{} {
	key := settingsTurnKey{group: group}
	if t := reflect.TypeOf(api); t != nil && t.Comparable() {
		key.api = api
	}
	turn, _ := settingsTurns.LoadOrStore(key, make(chan struct{}, 1))
	return turn.(chan struct{})
}

// credentialWords: a key whose lower-cased name contains any of these is refused on its name.
// Substring on purpose: a false refusal costs a trip to the app; a false pass leaks a secret.
var credentialWords = []string{"key", "token", "secret", "password", "passphrase", "credential", "auth"}

const executionGroupRefusal = "'execution' is not a settings group this tool can change, on purpose: admission control " +
	"(how many executions run at once, how deep the routine fire queue goes) is a decision about the machine " +
	"rather than about the research. Change it in resmon's Settings."

func credentialShaped(key string) bool {
	k := strings.ToLower(key)
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func toolUpdateSettings(ctx context.Context, api API, args map[string]any) (any, error) {
	if !hasArg(args, "group") {
		return nil, requiredError("group")
	}
	group := strings.TrimSpace(stringArg(args, "group"))
	if group == "execution" {
		return nil, InvalidArgument(executionGroupRefusal)
	}
	allowed := false
	for _, g := range settingsGroups {
		allowed = allowed || g == group
	}
	if !allowed {
		return nil, InvalidArgument(fmt.Sprintf("'%s' is not a settings group this tool can change. Allowed: %s.", group, settingsGroupList))
	}
	requested, ok := args["settings"].(map[string]any)
	if !ok || len(requested) == 0 {
		return nil, InvalidArgument("'settings' must be a non-empty object.")
	}
	keys := sortedKeys(requested)
	var refused []string
	for _, k := range keys {
		if credentialShaped(k) {
			refused = append(refused, k)
		}
	}
	if len(refused) > 0 {
		// Names only: the value is never repeated, and no request is made.
		return nil, NewError(CodeInvalidArgument, fmt.Sprintf("This tool cannot change a setting whose name looks like a credential (%s). "+
			"resmon's API keys and passwords are not settings; they are stored in the system keychain and are changed in the app, never through a tool.",
			strings.Join(refused, ", ")), map[string]any{"refused_keys": refused})
	}

	// One update per group at a time in this process: the answer is a before/after diff, and a
	// session's calls run concurrently, so two writes to one group would each report the
	// other's change as their own. (Changes made in the app meanwhile still show: they are real.)
	turn := settingsTurn(api, group)
	select {
	case turn <- struct{}{}:
		defer func() { <-turn }()
	case <-ctx.Done():
		return nil, NewError(CodeBackendUnavailable, MsgCancelled, nil)
	}

	path := "/api/settings/" + group
	before, err := readSettings(ctx, api, path, group, "")
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, k := range keys {
		if _, ok := before[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		groupKeys := sortedKeys(before)
		return nil, NewError(CodeInvalidArgument, fmt.Sprintf("The '%s' group has no setting called %s. Its keys are: %s.",
			group, quoteJoin(unknown), strings.Join(groupKeys, ", ")),
			map[string]any{"unknown_keys": unknown, "group_keys": groupKeys})
	}
	// Convert every value before the PUT, so a bad one means no write at all.
	send := make(map[string]any, len(keys))
	for _, k := range keys {
		v, terr := settingValue(k, requested[k], before[k])
		if terr != nil {
			return nil, terr
		}
		send[k] = v
	}
	if _, err := api.Call(ctx, &Request{Method: http.MethodPut, Path: path,
		Body: map[string]any{"settings": send}, Write: true}); err != nil {
		return nil, err
	}
	after, err := readSettings(ctx, api, path, group, " after the change")
	if err != nil {
		return nil, err
	}

	changed := map[string]any{}
	union := map[string]any{}
	for k := range before {
		union[k] = nil
	}
	for k := range after {
		union[k] = nil
	}
	for _, k := range sortedKeys(union) {
		if !reflect.DeepEqual(before[k], after[k]) {
			changed[k] = map[string]any{"from": before[k], "to": after[k]}
		}
	}
	unchanged := 0
	for k := range after {
		if _, ok := changed[k]; !ok {
			unchanged++
		}
	}
	detail := fmt.Sprintf("Nothing changed in '%s' — the values were already those.", group)
	if len(changed) > 0 {
		detail = fmt.Sprintf("%d setting(s) changed in '%s'.", len(changed), group)
	}
	return map[string]any{
		"group":               group,
		"changed":             changed,
		"requested":           keys,
		"unchanged_key_count": unchanged,
		"detail":              detail,
	}, nil
}

// readSettings GETs a group's writable map. For embeddings that is the nested "settings"
// object: the capability and provider metadata beside it are not settings.
func readSettings(ctx context.Context, api API, path, group, when string) (map[string]any, error) {
	res, err := callGet(ctx, api, path, nil)
	if err != nil {
		return nil, err
	}
	m, ok := res.(map[string]any)
	if !ok {
		return nil, NewError(CodeInternalError, fmt.Sprintf("resmon did not return the '%s' settings group%s.", group, when), nil)
	}
	if group == "embeddings" {
		nested, ok := m["settings"].(map[string]any)
		if !ok {
			return nil, NewError(CodeInternalError, "resmon did not return embedding settings"+when+".", nil)
		}
		return nested, nil
	}
	return m, nil
}

// settingValue converts one requested value for the PUT, judged by the field's current value.
// A field the backend holds as a JSON boolean takes a boolean or "true"/"false" and is sent as
// a JSON boolean (the backend stores Python truthiness, so the string "false" would mean on).
// Every other field is sent as text, which is how the backend stores it.
func settingValue(key string, v, current any) (any, *ToolError) {
	if _, isBool := current.(bool); isBool {
		b, ok := parseFlag(v)
		if !ok {
			return nil, InvalidArgument(fmt.Sprintf("'%s' requires true or false.", key))
		}
		return b, nil
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil // the renderer's convention: "true"/"false"
	}
	if f, ok := valFloat(v); ok {
		if n, isInt := numberInt(v, false); isInt {
			return strconv.FormatInt(n, 10), nil
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return nil, InvalidArgument(fmt.Sprintf("'%s' takes a text value.", key))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func quoteJoin(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = "'" + k + "'"
	}
	return strings.Join(q, ", ")
}
