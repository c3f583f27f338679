package toolfacts

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The question a person answers before a write is sent (Row.Confirm): what the call will do
// with its arguments, in plain words. Every value shown is cut short, since the arguments are
// the model's to choose.

func confirmRunSweep(a map[string]any) string {
	what := fmt.Sprintf("Search %s now for %s and store what they return", list(a["sources"]), quote(a["query"]))
	if v, ok := a["max_results"]; ok {
		what += fmt.Sprintf(" (at most %s results from each)", short(v))
	}
	if a["date_from"] != nil || a["date_to"] != nil {
		what += fmt.Sprintf(", published %s to %s", orAny(a["date_from"], "any time"), orAny(a["date_to"], "now"))
	}
	what += ". This queries those sources and uses their quota"
	if a["ai_enabled"] == true {
		what += ", and summarises the results with your AI lane"
	}
	return what
}

func confirmCreateRoutine(a map[string]any) string {
	what := fmt.Sprintf("Create a routine named %s that searches %s", quote(a["name"]), list(a["sources"]))
	if e, ok := a["entity"].(map[string]any); ok {
		what += fmt.Sprintf(" for watch profile %s (%s)", short(e["profile_id"]), short(e["mode"]))
	} else {
		what += " for " + list(a["keywords"])
	}
	what += fmt.Sprintf(" on the schedule %s. It is created inactive: nothing runs until it is activated", quote(a["schedule"]))
	return what
}

func confirmCreateWatchProfile(a map[string]any) string {
	what := "Create a watch profile for " + quote(a["name"])
	if o := a["orcid"]; o != nil {
		what += " with ORCID " + short(o)
	} else {
		what += " without an ORCID (its matches will be name matches only)"
	}
	return what
}

func confirmRunRoutine(a map[string]any) string {
	return fmt.Sprintf("Run routine %s now, outside its schedule. This queries its sources and uses their quota", short(a["routine_id"]))
}

func confirmActivateRoutine(a map[string]any) string {
	return fmt.Sprintf("Put routine %s on its schedule: from then on it runs by itself and uses its sources' quota", short(a["routine_id"]))
}

func confirmDeactivateRoutine(a map[string]any) string {
	return fmt.Sprintf("Take routine %s off its schedule. It and everything it found are kept", short(a["routine_id"]))
}

func confirmUpdateSettings(a map[string]any) string {
	var parts []string
	if m, ok := a["settings"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, short(k)+" → "+quote(m[k]))
		}
	}
	return fmt.Sprintf("Change settings in the %s group: %s", quote(a["group"]), strings.Join(parts, ", "))
}

const maxShown = 120

// short renders one argument value for the form, cut to maxShown characters.
func short(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		s = x
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	if r := []rune(s); len(r) > maxShown {
		s = string(r[:maxShown]) + "…"
	}
	return s
}

func quote(v any) string {
	if _, ok := v.(string); ok {
		return "“" + short(v) + "”"
	}
	return short(v)
}

func orAny(v any, none string) string {
	if v == nil {
		return none
	}
	return short(v)
}

// list renders a list argument as "a, b and c" (cut short like any value).
func list(v any) string {
	items, ok := v.([]any)
	if !ok || len(items) == 0 {
		return short(v)
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = short(it)
	}
	s := strings.Join(parts, ", ")
	if len(parts) > 1 {
		s = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return short(s)
}
