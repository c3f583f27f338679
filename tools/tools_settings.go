package tools

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/backend"
)

// update_settings: the one tool that overwrites existing values. Four structural guards, each
// before any later step: a group allowlist; credential-shaped key names refused before any
// request; legal keys read from the backend (unknown keys refused, never dropped); and an
// answer that is the backend's own before/after state, not an echo of the input.

// settingsTurner is an API that keeps settings turns of its own.
type settingsTurner interface {
	Turn(key string) chan struct{}
}

// settingsTurnFor returns api's turn for group. An API without turns of its own (a bare test
// double) gets a fresh one: there is no backend instance to share it with.
func settingsTurnFor(api backend.API, group string) chan struct{} {
	if t, ok := api.(settingsTurner); ok {
		return t.Turn(group)
	}
	return make(chan struct{}, 1)
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

func toolUpdateSettings(ctx context.Context, api backend.API, args map[string]any) (any, error) {
	group, requested, terr := settingsRequest(args)
	if terr != nil {
		return nil, terr
	}
	// One update per group at a time in this process: the answer is a before/after diff, and a
	// session's calls run concurrently, so two writes to one group would each report the
	// other's change as their own. (Changes made in the app meanwhile still show: they are real.)
	turn := settingsTurnFor(api, group)
	select {
	case turn <- struct{}{}:
		defer func() { <-turn }()
	case <-ctx.Done():
		return nil, backend.NewError(backend.CodeBackendUnavailable, backend.MsgCancelled, nil)
	}
	before, after, err := writeSettings(ctx, api, group, requested)
	if err != nil {
		return nil, err
	}
	return settingsAnswer(group, sortedKeys(requested), before, after), nil
}

// settingsRequest reads the group and the settings to change, refusing credential-shaped
// names before anything is requested. The group is one of the schema's enum (checked before).
func settingsRequest(args map[string]any) (string, map[string]any, *backend.ToolError) {
	if !hasArg(args, "group") {
		return "", nil, requiredError("group")
	}
	group := stringArg(args, "group")
	requested, ok := args["settings"].(map[string]any)
	if !ok || len(requested) == 0 {
		return "", nil, backend.InvalidArgument("'settings' must be a non-empty object.")
	}
	var refused []string
	for _, k := range sortedKeys(requested) {
		if credentialShaped(k) {
			refused = append(refused, k)
		}
	}
	if len(refused) > 0 {
		// Names only: the value is never repeated, and no request is made.
		return "", nil, backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("This tool cannot change a setting whose name looks like a credential (%s). "+
			"resmon's API keys and passwords are not settings; they are stored in the system keychain and are changed in the app, never through a tool.",
			strings.Join(refused, ", ")), map[string]any{"refused_keys": refused})
	}
	return group, requested, nil
}

// writeSettings reads the group, refuses unknown keys and values of the wrong kind (before
// any write, so a bad one means no write at all), PUTs only the named keys and reads the
// group again: the diff is the backend's own before and after, not an echo of the input.
func writeSettings(ctx context.Context, api backend.API, group string, requested map[string]any) (before, after map[string]any, err error) {
	path := "/api/settings/" + group
	before, err = readSettings(ctx, api, path, group, "")
	if err != nil {
		return nil, nil, err
	}
	keys := sortedKeys(requested)
	var unknown []string
	for _, k := range keys {
		if _, ok := before[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		groupKeys := sortedKeys(before)
		return nil, nil, backend.NewError(backend.CodeInvalidArgument, fmt.Sprintf("The '%s' group has no setting called %s. Its keys are: %s.",
			group, quoteJoin(unknown), strings.Join(groupKeys, ", ")),
			map[string]any{"unknown_keys": unknown, "group_keys": groupKeys})
	}
	send := make(map[string]any, len(keys))
	for _, k := range keys {
		v, terr := settingValue(k, requested[k], before[k])
		if terr != nil {
			return nil, nil, terr
		}
		send[k] = v
	}
	if _, err := api.Call(ctx, &backend.Request{Method: http.MethodPut, Path: path,
		Body: map[string]any{"settings": send}, Write: true}); err != nil {
		return nil, nil, err
	}
	after, err = readSettings(ctx, api, path, group, " after the change")
	return before, after, err
}

// settingsAnswer is the diff: every key whose value differs between the two reads.
func settingsAnswer(group string, requested []string, before, after map[string]any) map[string]any {
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
		"requested":           requested,
		"unchanged_key_count": unchanged,
		"detail":              detail,
	}
}

// readSettings GETs a group's writable map. For embeddings that is the nested "settings"
// object: the capability and provider metadata beside it are not settings. A reply that is not
// a non-empty map (every group has keys) is the reference's sentence, as upstream_error: the
// fault is the backend's, and an empty map would make every key look unknown.
func readSettings(ctx context.Context, api backend.API, path, group, when string) (map[string]any, error) {
	res, err := callGet(ctx, api, path, nil)
	if err != nil {
		return nil, err
	}
	m, _ := res.(map[string]any)
	if len(m) == 0 {
		return nil, backend.NewError(backend.CodeUpstreamError, fmt.Sprintf("resmon did not return the '%s' settings group%s.", group, when),
			map[string]any{"received": replyKind(res)})
	}
	if group == "embeddings" {
		nested, _ := m["settings"].(map[string]any)
		if len(nested) == 0 {
			return nil, backend.NewError(backend.CodeUpstreamError, "resmon did not return embedding settings"+when+".",
				map[string]any{"received": replyKind(m["settings"])})
		}
		return nested, nil
	}
	return m, nil
}

// settingValue converts one requested value for the PUT, judged by the field's current value.
// A field the backend holds as a JSON boolean takes a boolean or "true"/"false" and is sent as
// a JSON boolean (the backend stores Python truthiness, so the string "false" would mean on).
// Every other field is sent as text, which is how the backend stores it.
func settingValue(key string, v, current any) (any, *backend.ToolError) {
	if _, isBool := current.(bool); isBool {
		b, ok := parseFlag(v)
		if !ok {
			return nil, backend.InvalidArgument(fmt.Sprintf("'%s' requires true or false.", key))
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
	return nil, backend.InvalidArgument(fmt.Sprintf("'%s' takes a text value.", key))
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
