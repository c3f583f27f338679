package resmonsim

import (
	"strconv"
	"strings"
)

// settingsGroupOrder is the MCP allowlist order; every group is its own pair of routes.
var settingsGroupOrder = []string{"ai", "assistant", "email", "embeddings", "cloud", "storage", "notifications"}

// settingsKeys lists each generic group's keys in the backend's order (§6.25).
var settingsKeys = map[string][]string{
	"ai": {"ai_provider", "ai_model", "ai_local_model", "ai_summary_length", "ai_tone", "ai_extraction_goals",
		"ai_temperature", "ai_show_audit_prefix", "ai_custom_base_url", "ai_custom_header_prefix", "ai_default_models",
		"ai_chain", "ai_local_endpoint", "ai_cli_path", "ai_subscription_doc_cap", "ai_effort"},
	"email":      {"smtp_server", "smtp_port", "smtp_username", "smtp_from", "smtp_to"},
	"cloud":      {"cloud_provider", "cloud_auto_backup"},
	"storage":    {"pdf_policy", "txt_policy", "archive_after_days", "export_directory"},
	"assistant":  {"assistant_runtime", "assistant_provider", "assistant_model", "assistant_effort"},
	"embeddings": {"embedding_enabled", "embedding_provider", "embedding_model", "embedding_endpoint", "embedding_base_url", "embedding_batch_size", "embedding_dims", "embedding_input_limit"},
}

// embeddingProviders is the sorted provider table of the embeddings GET.
var embeddingProviders = []struct {
	name, state, reason, model string
	suggested                  []string
}{
	{"alibaba", "yes", "", "text-embedding-v3", []string{"text-embedding-v3"}},
	{"anthropic", "no", "Anthropic does not offer an embeddings API. Choose another provider for embeddings.", "", nil},
	{"claude_code", "no", "Claude Code is a subscription CLI and cannot produce embeddings.", "", nil},
	{"codex", "no", "Codex is a subscription CLI and cannot produce embeddings.", "", nil},
	{"custom", "unknown", "", "", nil},
	{"deepseek", "unknown", "", "", nil},
	{"google", "yes", "", "text-embedding-004", []string{"text-embedding-004"}},
	{"local", "yes", "", "nomic-embed-text", []string{"nomic-embed-text", "all-minilm"}},
	{"meta", "unknown", "", "", nil},
	{"openai", "yes", "", "text-embedding-3-small", []string{"text-embedding-3-small", "text-embedding-3-large"}},
	{"xai", "unknown", "", "", nil},
}

func truthyString(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func (c *corpus) embeddingsEnabled() bool {
	return truthyString(c.settings["embedding_enabled"]) && c.settings["embedding_model"] != ""
}

func (c *corpus) embeddedCount() int {
	n := 0
	for _, d := range c.docs {
		if docEmbedded(d) {
			n++
		}
	}
	return n
}

func (c *corpus) capability() obj {
	if !c.embeddingsEnabled() {
		return o("available", false, "extension", "v0.1.9", "reason", "No embedding model is configured.", "model", nil, "indexed", 0)
	}
	return o("available", true, "extension", "v0.1.9", "reason", nil, "model", c.settings["embedding_model"], "indexed", c.embeddedCount())
}

// settingsGet renders a group as its GET route does.
func (c *corpus) settingsGet(group string) (obj, bool) {
	switch group {
	case "notifications":
		manual := true
		if v, ok := c.settings["notify_manual"]; ok {
			manual = truthyString(v)
		}
		mode := c.settings["notify_automatic_mode"]
		if mode != "all" && mode != "selected" && mode != "none" {
			mode = "none"
		}
		return o("notify_manual", manual, "notify_automatic_mode", mode), true
	case "execution":
		return o("max_concurrent_executions", c.intSetting("max_concurrent_executions", 3),
			"routine_fire_queue_limit", c.intSetting("routine_fire_queue_limit", 16)), true
	case "embeddings":
		settings := obj{}
		for _, k := range settingsKeys["embeddings"] {
			settings = append(settings, kv{k, c.settings[k]})
		}
		providers := []any{}
		for _, p := range embeddingProviders {
			var model any
			if p.model != "" {
				model = p.model
			}
			providers = append(providers, o("provider", p.name, "state", p.state, "reason", ns(p.reason),
				"evidence", "Simulated provider table.", "offered", p.state == "yes", "default_model", model,
				"suggested_models", strSlice(append([]string{}, p.suggested...))))
		}
		var lane any
		if c.embeddingsEnabled() {
			kind := "api_key"
			prov := c.settings["embedding_provider"]
			if prov == "local" {
				kind = "local"
			}
			endpoint := any(nil)
			if prov == "local" {
				endpoint = firstNonEmpty(c.settings["embedding_endpoint"], "http://localhost:11434")
			}
			dims := any(nil)
			if n, err := strconv.Atoi(c.settings["embedding_dims"]); err == nil {
				dims = n
			}
			batch := 32
			if n, err := strconv.Atoi(c.settings["embedding_batch_size"]); err == nil {
				batch = n
			}
			lane = o("kind", kind, "provider", prov, "model", c.settings["embedding_model"], "endpoint", endpoint,
				"base_url", ns(c.settings["embedding_base_url"]), "credential_alias", nil, "batch_size", batch, "dims", dims,
				"input_limit", nil)
		}
		status := o("state", "idle", "model", ns(c.settings["embedding_model"]), "done", c.embeddedCount(),
			"total", len(c.docs), "error", nil)
		return o("settings", settings, "providers", providers, "lane", lane, "capability", c.capability(), "status", status), true
	}
	keys, ok := settingsKeys[group]
	if !ok {
		return nil, false
	}
	out := obj{}
	for _, k := range keys {
		out = append(out, kv{k, c.settings[k]})
	}
	return out, true
}

func (c *corpus) intSetting(k string, def int) int {
	if n, err := strconv.Atoi(c.settings[k]); err == nil {
		return n
	}
	return def
}

func settingsGet(group string) func(*Sim, *call) *reply {
	return func(s *Sim, c *call) *reply {
		v, _ := s.data.settingsGet(group)
		return okReply(v)
	}
}

// settingsBody reads SettingsBody: {"settings": <required object>}.
func settingsBody(c *call) (obj, *reply) {
	f, _, rep := c.validBody(settingsBodyModel)
	if rep != nil {
		return nil, rep
	}
	return f.object("settings"), nil
}

func settingsPut(group string) func(*Sim, *call) *reply {
	return func(s *Sim, c *call) *reply {
		in, rep := settingsBody(c)
		if rep != nil {
			return rep
		}
		switch group {
		case "notifications":
			if v, ok := in.get("notify_automatic_mode"); ok {
				mode := strings.ToLower(pyStr(v))
				if mode != "all" && mode != "selected" && mode != "none" {
					return detailReply(400, "notify_automatic_mode must be 'all', 'selected', or 'none'")
				}
				s.data.settings["notify_automatic_mode"] = mode
			}
			if v, ok := in.get("notify_manual"); ok {
				s.data.settings["notify_manual"] = strconv.Itoa(b01(pyTruthy(v)))
			}
			return okReply(o("success", true))
		case "embeddings":
			if v, ok := in.get("embedding_provider"); ok {
				prov := pyStr(v)
				for _, p := range embeddingProviders {
					if p.name == prov && p.state == "no" {
						return detailReply(400, p.reason)
					}
				}
			}
			s.storeGroup("embeddings", in)
			return okReply(o("success", true, "capability", s.data.capability()))
		}
		s.storeGroup(group, in)
		return okReply(o("success", true))
	}
}

// storeGroup keeps only the group's keys, stored as Python's str() of the value — the
// quirk that turns JSON true into "True".
func (s *Sim) storeGroup(group string, in obj) {
	for _, p := range in {
		if contains(settingsKeys[group], p.k) {
			s.data.settings[p.k] = pyStr(p.v)
		}
	}
}

func (s *Sim) hExecSettingsGet(c *call) *reply {
	v, _ := s.data.settingsGet("execution")
	return okReply(v)
}

func (s *Sim) hExecSettingsPut(c *call) *reply {
	f, _, rep := c.validBody(executionSettingsBody)
	if rep != nil {
		return rep
	}
	maxExec, queue := f.integer("max_concurrent_executions"), f.integer("routine_fire_queue_limit")
	if maxExec < 1 || maxExec > 8 {
		return detailReply(400, "max_concurrent_executions must be between 1 and 8")
	}
	if queue < 1 || queue > 64 {
		return detailReply(400, "routine_fire_queue_limit must be between 1 and 64")
	}
	s.data.settings["max_concurrent_executions"] = strconv.Itoa(maxExec)
	s.data.settings["routine_fire_queue_limit"] = strconv.Itoa(queue)
	return okReply(o("success", true, "max_concurrent_executions", maxExec, "routine_fire_queue_limit", queue))
}

func (s *Sim) hCLIStatus(c *call) *reply {
	out := []any{}
	for _, p := range []struct{ name, cli string }{{"claude_code", "claude"}, {"codex", "codex"}} {
		out = append(out, o("provider", p.name, "cli", p.cli, "installed", false, "path", nil, "login_checked", false))
	}
	return okReply(o("providers", out))
}
