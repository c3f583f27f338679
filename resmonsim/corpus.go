package resmonsim

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// corpus is the simulated database. Everything in it is deterministic; only the runtime
// id of the serving process and the clock of runs started through the API vary.
type corpus struct {
	docs       []*document
	execs      []*execution
	routines   []*routine
	profiles   []*profile
	deliveries []*delivery
	targets    []*deliveryTarget
	lifecycle  map[int]*lifecycleState
	settings   map[string]string
	creds      map[string]string // credential name → present|absent|unreadable
	mutes      map[string]string // watchdog finding key → note
	nextExec   int
	nextRout   int
	nextProf   int
	nextMissed int
}

type document struct {
	ID                                         int
	Source, ExternalID, DOI, Title, Authors    string
	Abstract, PublicationDate, URL, Categories string
	MetadataHash, FirstSeenAt                  string
}

type sourceRow struct {
	Source      string
	Status      string // ok | error | skipped_missing_key | cancelled
	ResultCount int
	ZeroReason  string // "" = null
	RecordedAt  string
}

type execution struct {
	ID                                int
	Type                              string
	RoutineID, SavedConfigID          int
	SavedConfigName                   string
	Params                            obj // stored as a JSON string
	Start, End, Status                string
	ResultCount, NewCount             int
	LogPath, ResultPath, ErrorMessage string
	ProgressEvents, CurrentStage      string
	OwnerPID                          int
	OwnerRuntimeID, LastSeen          string
	InterruptedReason                 string
	RestartedFrom                     int
	CancelReason                      string
	Dedup                             []int // total, new, duplicates, invalid, cross_source; nil = NULL
	RequestID                         string
	Docs, NewDocs                     []int
	Sources                           []sourceRow
	started                           time.Time // API-started runs finish RunDuration after this
	AIEnabled                         bool
}

type missedFire struct {
	ID                      int
	RoutineID               int
	DueAt, ObservedAt, Disp string
}

type routine struct {
	ID                                   int
	Name, Cron                           string
	Params                               obj
	IsActive, EmailEnabled, EmailAISum   bool
	AIEnabled, NotifyOnComplete          bool
	AISettings, StorageSettings          any // obj or nil; stored as JSON text
	Intent                               string
	CreatedAt, UpdatedAt, LastExecutedAt string
	Missed                               []*missedFire
}

type nameEntry struct{ Value, Script string }

type identEntry struct{ Value, Cited string }

type profile struct {
	ID                   int
	Kind, DisplayName    string
	Names                []nameEntry
	Identifiers          []kvIdent
	Affiliations, Fields []string
	Notes                string
	CreatedAt, UpdatedAt string
}

type kvIdent struct {
	Scheme string
	identEntry
}

type deliveryTarget struct {
	ID, RoutineID int
	Channel, Mode string
	Enabled       bool
}

type delivery struct {
	ID, ExecutionID, TargetID, Attempts int
	Channel, Snapshot, State            string
	LastError, Queued, Delivered        string
}

type lifecycleEvent struct {
	Kind, Severity, NoticeKey, Label, NoticeDOI, NoticeURL, NoticeDate, Detail, Provider, ProviderSource, FirstSeenAt string
}

type lifecycleState struct {
	CheckedAt, CheckStatus string
	Events                 []lifecycleEvent
}

// seed data -------------------------------------------------------------------------

var (
	seedSources = []string{"arxiv", "openalex", "crossref", "semantic_scholar", "pubmed", "biorxiv"}
	seedMethods = []string{"Diffusion models", "Graph neural networks", "Sparse attention", "Learned closures",
		"Physics-informed networks", "Variational inference", "Transformer surrogates", "Bayesian optimisation"}
	seedObjects = []string{"turbulent flow reconstruction", "protein folding", "climate downscaling",
		"quantum error correction", "materials discovery"}
	seedObjectCats = []string{"physics.flu-dyn", "q-bio.BM", "physics.ao-ph", "quant-ph", "cond-mat.mtrl-sci"}
	seedAuthors    = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Emmy Noether", "John Smith",
		"Katherine Johnson", "Claude Shannon", "Rosalind Franklin", "Jane Smith", "Hedy Lamarr", "Émilie du Châtelet"}
)

// priorRuntimeID owned the runs that a previous process left behind.
const priorRuntimeID = "0b7c2e4a-5d1f-4c3b-9a8e-6f2d1c0b9a87"

func newCorpus(seeded bool, papers int) *corpus {
	c := &corpus{
		lifecycle: map[int]*lifecycleState{},
		settings:  map[string]string{},
		creds:     map[string]string{},
		mutes:     map[string]string{},
		nextExec:  1, nextRout: 1, nextProf: 1, nextMissed: 1,
	}
	c.seedSettings()
	if seeded {
		c.seedDocs()
		c.seedRoutines()
		c.seedExecutions()
		c.seedProfiles()
		c.seedDeliveries()
		c.seedLifecycle()
	}
	c.addPapers(papers)
	return c
}

// addPapers adds n generated papers after the seeded ones, for a corpus large enough to page
// through (Options.Papers, --papers): every title holds the word "model", so a keyword search
// for "model" finds them all, and three share each publication date, so paging by cursor meets
// ties on the date. Deterministic, like the rest.
func (c *corpus) addPapers(n int) {
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	first := len(c.docs) + 1
	for i := 0; i < n; i++ {
		id := first + i
		src := seedSources[i%len(seedSources)]
		pub := base.AddDate(0, 0, -i/3)
		d := &document{ID: id, Source: src, ExternalID: fmt.Sprintf("gen.%06d", id),
			Title:           fmt.Sprintf("A model of %s, generated paper %d", seedObjects[i%len(seedObjects)], id),
			Authors:         strings.Join([]string{seedAuthors[i%len(seedAuthors)], seedAuthors[(i+3)%len(seedAuthors)]}, ", "),
			Abstract:        "A generated abstract about " + seedObjects[i%len(seedObjects)] + ".",
			PublicationDate: pub.Format("2006-01-02"), DOI: fmt.Sprintf("10.5555/gen.%d", id),
			Categories: "cs.LG", MetadataHash: fmt.Sprintf("hash-gen-%06d", id),
			FirstSeenAt: pub.AddDate(0, 0, 1).Format(sqlTime)}
		d.URL = "https://example.org/" + src + "/" + d.ExternalID
		c.docs = append(c.docs, d)
	}
}

func (c *corpus) seedSettings() {
	for k, v := range map[string]string{
		"schema_version": "21",
		"ai_provider":    "anthropic", "ai_model": "claude-sonnet-4-5", "ai_summary_length": "standard",
		"ai_tone": "neutral", "ai_temperature": "0.2", "ai_show_audit_prefix": "true", "ai_effort": "high",
		"smtp_server": "smtp.example.org", "smtp_port": "587", "smtp_username": "resmon@example.org",
		"smtp_from": "resmon@example.org", "smtp_to": "ada@example.org",
		"cloud_provider": "", "cloud_auto_backup": "false",
		"pdf_policy": "archive", "txt_policy": "save", "archive_after_days": "30",
		"assistant_runtime": "claude_cli", "assistant_model": "claude-sonnet-4-5", "assistant_effort": "medium",
		"notify_automatic_mode": "selected",
		"embedding_enabled":     "true", "embedding_provider": "local", "embedding_model": "nomic-embed-text",
		"embedding_dims":            "768",
		"max_concurrent_executions": "3", "routine_fire_queue_limit": "16",
	} {
		c.settings[k] = v
	}
	for _, n := range credentialNames() {
		c.creds[n] = "absent"
	}
	c.creds["core_api_key"] = "present"
	c.creds["openai_api_key"] = "present"
	c.creds["semantic_scholar_api_key"] = "unreadable"
}

func (c *corpus) seedDocs() {
	base := time.Date(2026, 9, 15, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 40; i++ {
		id := i + 1
		src := seedSources[i%len(seedSources)]
		method, object := seedMethods[i%8], seedObjects[i%5]
		d := &document{ID: id, Source: src, Title: method + " for " + object}
		var authors []string
		for _, k := range []int{i % 11, (i*3 + 1) % 11, (i*7 + 2) % 11} {
			a := seedAuthors[k]
			dup := false
			for _, have := range authors {
				dup = dup || have == a
			}
			if !dup {
				authors = append(authors, a)
			}
		}
		d.Authors = strings.Join(authors, ", ")
		if i%10 != 9 {
			d.Abstract = "We study " + strings.ToLower(method) + " applied to " + object + "."
		}
		pub := base.AddDate(0, 0, -6*i)
		switch {
		case i == 23:
		case i == 17:
			d.PublicationDate = pub.Format("2006")
		case i%9 == 4:
			d.PublicationDate = pub.Format("2006-01")
		default:
			d.PublicationDate = pub.Format("2006-01-02")
		}
		n := 1751700 + id
		switch src {
		case "arxiv":
			d.ExternalID = fmt.Sprintf("2609.%05d", id)
		case "openalex":
			d.ExternalID = fmt.Sprintf("W%d", 4390000000+id)
		case "crossref":
			d.ExternalID = fmt.Sprintf("10.1000/cr.%d", n)
		case "semantic_scholar":
			d.ExternalID = fmt.Sprintf("corpusid:%d", n)
		case "pubmed":
			d.ExternalID = fmt.Sprintf("%d", 38000000+id)
		case "biorxiv":
			d.ExternalID = fmt.Sprintf("10.1101/2026.08.%02d.%d", 1+id%28, 600000+id)
		}
		if i%4 != 3 {
			switch src {
			case "arxiv":
				d.DOI = "10.48550/arXiv." + d.ExternalID
			case "crossref", "biorxiv":
				d.DOI = d.ExternalID
			default:
				d.DOI = fmt.Sprintf("10.1000/%s.%d", strings.ReplaceAll(src, "_", ""), n)
			}
		}
		d.URL = "https://example.org/" + src + "/" + d.ExternalID
		d.Categories = "cs.LG, " + seedObjectCats[i%5]
		d.MetadataHash = fmt.Sprintf("hash-%s-%04d", src, id)
		// Discovered a few days after publication, so discovery lag is positive.
		d.FirstSeenAt = pub.AddDate(0, 0, 2+i%11).Add(5*time.Hour + 37*time.Minute + time.Duration(i%5)*time.Hour).Format(sqlTime)
		c.docs = append(c.docs, d)
	}
}

// Timestamp layouts in use across resmon's tables (backend-http-api.md §1).
const (
	sqlTime = "2006-01-02 15:04:05"
	isoZ    = "2006-01-02T15:04:05Z"
	isoUTC  = "2006-01-02T15:04:05.000000+00:00"
)

func (c *corpus) seedRoutines() {
	c.addRoutine(&routine{Name: "Turbulence watch", Cron: "0 7 * * 1",
		Params: o("query", "diffusion turbulence", "keywords", strSlice([]string{"diffusion", "turbulent"}),
			"repositories", strSlice([]string{"arxiv", "openalex", "semantic_scholar"})),
		IsActive: true, Intent: "Anything new on learned turbulence closures.",
		CreatedAt: "2026-08-01 08:00:00", UpdatedAt: "2026-08-01 08:00:00", LastExecutedAt: "2026-09-14 07:00:03"})
	c.addRoutine(&routine{Name: "Protein folding digest", Cron: "30 6 * * *",
		Params:       o("query", "protein folding", "repositories", strSlice([]string{"pubmed", "biorxiv"}), "max_results", 50),
		EmailEnabled: true, NotifyOnComplete: true,
		CreatedAt: "2026-08-10 09:30:00", UpdatedAt: "2026-09-02 11:00:00", LastExecutedAt: "2026-09-01 06:30:02"})
	c.addRoutine(&routine{Name: "Lovelace retraction watch", Cron: "0 9 * * *",
		Params: o("query", "", "repositories", strSlice([]string{"crossref", "openalex"}),
			"entity", o("mode", "retractions", "profile_id", 1)),
		IsActive: true, AIEnabled: true, AISettings: o("ai_provider", "anthropic", "ai_model", "claude-sonnet-4-5"),
		Intent:    "Retractions or corrections on papers by Ada Lovelace.",
		CreatedAt: "2026-09-01 10:00:00", UpdatedAt: "2026-09-01 10:00:00", LastExecutedAt: "2026-09-15 09:00:01"})
	r1 := c.routines[0]
	for _, due := range []string{"2026-09-07T07:00:00+00:00", "2026-09-14T07:00:00+00:00"} {
		r1.Missed = append(r1.Missed, &missedFire{ID: c.nextMissed, RoutineID: 1, DueAt: due,
			ObservedAt: strings.Replace(due, "T07:00:00", "T09:12:00", 1), Disp: "recorded"})
		c.nextMissed++
	}
}

func (c *corpus) addRoutine(r *routine) {
	r.ID = c.nextRout
	c.nextRout++
	c.routines = append(c.routines, r)
}

func sweepParams(query string, keywords any, repos []string, max int) obj {
	return o("query", query, "keywords", keywords, "date_from", nil, "date_to", nil, "max_results", max,
		"repositories", strSlice(repos))
}

func (c *corpus) docsFrom(sources []string, limit int) []int {
	var ids []int
	for _, d := range c.docs {
		for _, s := range sources {
			if d.Source == s && len(ids) < limit {
				ids = append(ids, d.ID)
			}
		}
	}
	return ids
}

func (c *corpus) seedExecutions() {
	done := func(e *execution) {
		e.Status, e.CurrentStage = "completed", "complete"
		e.ResultCount = len(e.Docs)
		if len(e.Docs) > 0 {
			e.NewDocs = e.Docs[:(len(e.Docs)+2)/3]
		}
		e.NewCount = len(e.NewDocs)
		e.ProgressEvents = pyDumps([]any{
			o("type", "execution_start", "execution_id", e.ID, "timestamp", e.Start),
			o("type", "complete", "execution_id", e.ID, "result_count", e.ResultCount, "timestamp", e.End)})
		e.Dedup = []int{e.ResultCount + 1, e.NewCount, e.ResultCount - e.NewCount, 0, 1}
	}
	paths := func(e *execution) {
		e.LogPath = fmt.Sprintf("/home/resmon/.local/share/resmon/logs/exec_%d.log", e.ID)
		e.ResultPath = fmt.Sprintf("/home/resmon/.local/share/resmon/reports/exec_%d.md", e.ID)
	}

	e1 := c.addExec(&execution{Type: "deep_sweep", Params: sweepParams("diffusion turbulent", strSlice([]string{"diffusion", "turbulent"}), []string{"arxiv", "openalex"}, 50),
		Start: "2026-09-14T13:10:02Z", End: "2026-09-14T13:11:40Z", OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID,
		LastSeen: "2026-09-14T13:11:40.120000+00:00"})
	e1.Docs = c.docsFrom([]string{"arxiv", "openalex"}, 12)
	done(e1)
	paths(e1)
	e1.Sources = []sourceRow{{"arxiv", "ok", 7, "", "2026-09-14 13:10:40"}, {"openalex", "ok", 6, "", "2026-09-14 13:11:02"}}

	e2 := c.addExec(&execution{Type: "deep_dive", SavedConfigID: 1, SavedConfigName: "QEC deep dive",
		Params: o("query", "quantum error correction", "keywords", strSlice([]string{"quantum error correction"}), "date_from", "2026-01-01",
			"date_to", nil, "max_results", 25, "repository", "arxiv"),
		Start: "2026-09-12T08:00:00Z", End: "2026-09-12T08:00:41Z", OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID,
		LastSeen: "2026-09-12T08:00:41.002000+00:00"})
	for _, d := range c.docs {
		if d.Source == "arxiv" && strings.Contains(d.Title, "quantum") {
			e2.Docs = append(e2.Docs, d.ID)
		}
	}
	done(e2)
	paths(e2)
	e2.Sources = []sourceRow{{"arxiv", "ok", len(e2.Docs), "", "2026-09-12 08:00:30"}}

	e3 := c.addExec(&execution{Type: "automated_sweep", RoutineID: 1, Params: c.routines[0].Params,
		Start: "2026-09-14T07:00:03Z", End: "2026-09-14T07:02:10Z", OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID,
		LastSeen: "2026-09-14T07:02:10.550000+00:00"})
	e3.Docs = c.docsFrom([]string{"arxiv"}, 5)
	done(e3)
	paths(e3)
	e3.Sources = []sourceRow{{"arxiv", "ok", 5, "", "2026-09-14 07:00:50"}, {"openalex", "ok", 0, "answered_empty", "2026-09-14 07:01:20"},
		{"semantic_scholar", "error", 0, "upstream_failure", "2026-09-14 07:02:05"}}

	e4 := c.addExec(&execution{Type: "automated_sweep", RoutineID: 1, Params: c.routines[0].Params,
		Start: "2026-09-07T09:12:05Z", End: "2026-09-07T09:13:00Z", Status: "failed",
		ErrorMessage: "No selected source answered: semantic_scholar answered HTTP 503.", CurrentStage: "querying sources",
		OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID, LastSeen: "2026-09-07T09:13:00.010000+00:00",
		ProgressEvents: pyDumps([]any{o("type", "execution_start", "execution_id", 4, "timestamp", "2026-09-07T09:12:05Z"),
			o("type", "error", "execution_id", 4, "message", "No selected source answered.")})})
	paths(e4)
	e4.ResultPath = ""
	e4.Sources = []sourceRow{{"semantic_scholar", "error", 0, "upstream_failure", "2026-09-07 09:12:58"},
		{"openalex", "ok", 0, "", "2026-09-07 09:12:40"}}

	e5 := c.addExec(&execution{Type: "deep_sweep", Params: sweepParams("materials discovery", strSlice([]string{"materials discovery"}), []string{"crossref", "pubmed"}, 100),
		Start: "2026-09-10T16:20:00Z", End: "2026-09-11T08:00:12Z", Status: "interrupted", InterruptedReason: "owner_dead",
		CurrentStage: "querying sources", OwnerPID: 40117, OwnerRuntimeID: "5e3d9c1b-2a4f-4e6d-8c7b-1a0f9e8d7c6b",
		LastSeen: "2026-09-10T16:21:30.000000+00:00", ErrorMessage: "Execution interrupted on owner_dead"})
	paths(e5)
	e5.ResultPath = ""
	e5.Sources = []sourceRow{{"crossref", "ok", 4, "", "2026-09-10 16:21:00"}}

	e6 := c.addExec(&execution{Type: "automated_sweep", RoutineID: 2, Params: c.routines[1].Params,
		Start: "2026-09-01T06:30:02Z", End: "2026-09-01T06:31:00Z", Status: "interrupted", InterruptedReason: "daemon_restart",
		CancelReason: "daemon_restart", ErrorMessage: "Execution interrupted on daemon_restart", CurrentStage: "querying sources",
		OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID, LastSeen: "2026-09-01T06:30:32.000000+00:00"})
	paths(e6)
	e6.ResultPath = ""

	e7 := c.addExec(&execution{Type: "deep_sweep", Params: e5.Params, RestartedFrom: 5,
		Start: "2026-09-11T08:05:00Z", End: "2026-09-11T08:06:31Z", OwnerPID: 48213, OwnerRuntimeID: priorRuntimeID,
		LastSeen: "2026-09-11T08:06:31.400000+00:00", RequestID: "restart-5-7f3a"})
	e7.Docs = c.docsFrom([]string{"crossref", "pubmed"}, 10)
	done(e7)
	paths(e7)
	e7.Sources = []sourceRow{{"crossref", "ok", 6, "", "2026-09-11 08:05:50"}, {"pubmed", "ok", 4, "", "2026-09-11 08:06:20"}}

	// A routine fire still running when the simulator starts; it is owned by whichever
	// instance is serving, so a graceful restart interrupts it (daemon_restart).
	e8 := c.addExec(&execution{Type: "automated_sweep", RoutineID: 3,
		Params: append(append(obj{}, c.routines[2].Params...), kv{"entity_mode", "retractions"}, kv{"entity_profile_id", 1},
			kv{"entity_profile", "Ada Lovelace"}),
		Start: "2026-09-15T09:00:01Z", Status: "running", CurrentStage: "querying sources", OwnerPID: os.Getpid(),
		LastSeen: "2026-09-15T09:00:31.000000+00:00", AIEnabled: true})
	paths(e8)
	e8.ResultPath = ""
	e8.Sources = []sourceRow{{"crossref", "ok", 2, "", "2026-09-15 09:00:20"}}
}

func (c *corpus) addExec(e *execution) *execution {
	e.ID = c.nextExec
	c.nextExec++
	if e.Status == "" {
		e.Status = "running"
	}
	c.execs = append(c.execs, e)
	return e
}

func (c *corpus) seedProfiles() {
	c.addProfile(&profile{Kind: "person", DisplayName: "Ada Lovelace",
		Names:        []nameEntry{{"Ada Lovelace", "latin"}, {"A. Lovelace", "latin"}},
		Identifiers:  []kvIdent{{"orcid", identEntry{"0000-0002-1825-0097", "https://example.org/orcid-page"}}},
		Affiliations: []string{"Analytical Engine Group"}, Fields: []string{"machine learning"},
		Notes: "Watched since the corpus was started.", CreatedAt: "2026-08-20 10:00:00", UpdatedAt: "2026-08-20 10:00:00"})
	c.addProfile(&profile{Kind: "person", DisplayName: "Grace Hopper",
		Names:        []nameEntry{{"Grace Hopper", "latin"}},
		Affiliations: []string{"Naval Computing Laboratory"}, Fields: []string{},
		CreatedAt: "2026-08-21 10:00:00", UpdatedAt: "2026-08-21 10:00:00"})
	c.addProfile(&profile{Kind: "person", DisplayName: "J. Smith",
		Names:        []nameEntry{{"J. Smith", "latin"}, {"John Smith", "latin"}, {"Jane Smith", "latin"}},
		Affiliations: []string{}, Fields: []string{},
		CreatedAt: "2026-08-22 10:00:00", UpdatedAt: "2026-08-22 10:00:00"})
}

func (c *corpus) addProfile(p *profile) {
	p.ID = c.nextProf
	c.nextProf++
	c.profiles = append(c.profiles, p)
}

func (c *corpus) seedDeliveries() {
	c.targets = []*deliveryTarget{
		{1, 1, "email", "automatic", true}, {2, 1, "folder", "automatic", true}, {3, 1, "webhook", "review", true},
		{4, 2, "email", "automatic", true}, {5, 3, "feed", "automatic", false},
	}
	c.deliveries = []*delivery{
		{ID: 1, ExecutionID: 3, TargetID: 1, Channel: "email", Snapshot: "ada@example.org", State: "delivered", Attempts: 1,
			Queued: "2026-09-14T07:02:11.000001+00:00", Delivered: "2026-09-14T07:02:14.120000+00:00"},
		{ID: 2, ExecutionID: 3, TargetID: 2, Channel: "folder", Snapshot: "/home/resmon/Reports", State: "failed", Attempts: 3,
			LastError: "Could not write the report into <target>: [Errno 13] Permission denied",
			Queued:    "2026-09-14T07:02:11.000002+00:00"},
		{ID: 3, ExecutionID: 3, TargetID: 3, Channel: "webhook", Snapshot: "https://example.org/resmon-receiver",
			State: "awaiting_review", Queued: "2026-09-14T07:02:11.000003+00:00"},
		{ID: 4, ExecutionID: 6, TargetID: 4, Channel: "email", Snapshot: "ada@example.org", State: "failed", Attempts: 1,
			LastError: "SMTPRecipientsRefused: <address> was refused by the server", Queued: "2026-09-01T06:31:00.000001+00:00"},
	}
}

func (c *corpus) seedLifecycle() {
	c.lifecycle[7] = &lifecycleState{CheckedAt: "2026-09-02 09:19:00", CheckStatus: "ok", Events: []lifecycleEvent{
		{"retraction", "critical", "crossref:10.1000/retraction.1", "Retracted", "10.1000/retraction.1",
			"https://example.org/notice/retraction-1", "2026-08-30", "Retracted by the publisher.", "crossref", "crossref-update-feed", "2026-09-02 09:19:00"},
		{"correction", "caution", "crossref:10.1000/correction.7", "Corrected", "10.1000/correction.7",
			"https://example.org/notice/correction-7", "2026-06-01", "A correction was issued for Figure 2.", "crossref", "crossref-update-feed", "2026-09-02 09:19:00"},
	}}
	c.lifecycle[1] = &lifecycleState{CheckedAt: "2026-09-02 09:20:00", CheckStatus: "ok", Events: []lifecycleEvent{
		{"published_version", "informational", "openalex:W4390000001", "Published version available", "10.1000/journal.1",
			"https://example.org/journal/1", "2026-09-10", "The preprint was published in a journal.", "openalex", "openalex-works", "2026-09-02 09:20:00"},
	}}
	c.lifecycle[2] = &lifecycleState{CheckedAt: "2026-09-02 09:21:00", CheckStatus: "ok"}
	c.lifecycle[4] = &lifecycleState{CheckedAt: "2026-09-02 09:22:00", CheckStatus: "no_identifier"}
}

// lookups and state changes ----------------------------------------------------------

func (c *corpus) doc(id int) *document {
	for _, d := range c.docs {
		if d.ID == id {
			return d
		}
	}
	return nil
}

func (c *corpus) execution(id int) *execution {
	for _, e := range c.execs {
		if e.ID == id {
			return e
		}
	}
	return nil
}

func (c *corpus) routine(id int) *routine {
	for _, r := range c.routines {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (c *corpus) profile(id int) *profile {
	for _, p := range c.profiles {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// reconcile runs at every start, like the app's startup reconciliation: rows left running
// by a crashed process become interrupted (owner_dead); seeded running rows are adopted.
func (c *corpus) reconcile(crashed bool, runtimeID string) {
	for _, e := range c.execs {
		if e.Status != "running" {
			continue
		}
		if crashed && e.OwnerRuntimeID != "" {
			c.interrupt(e, "owner_dead", "")
			continue
		}
		e.OwnerRuntimeID = runtimeID
	}
}

func (c *corpus) interruptRunning(reason, cancel string) {
	for _, e := range c.execs {
		if e.Status == "running" {
			c.interrupt(e, reason, cancel)
		}
	}
}

func (c *corpus) interrupt(e *execution, reason, cancel string) {
	e.Status, e.InterruptedReason, e.CancelReason = "interrupted", reason, cancel
	e.ErrorMessage = "Execution interrupted on " + reason
	e.End = time.Now().UTC().Format(isoZ)
	e.ProgressEvents = ""
}

// settle finishes API-started runs whose simulated duration has passed.
func (c *corpus) settle(now time.Time, d time.Duration) {
	for _, e := range c.execs {
		if e.Status != "running" || e.started.IsZero() || now.Sub(e.started) < d {
			continue
		}
		c.finish(e, e.started.Add(d))
	}
}

// finish completes a run deterministically from its selected sources.
func (c *corpus) finish(e *execution, at time.Time) {
	repos := paramRepos(e.Params)
	max := 12
	if v, ok := e.Params.get("max_results"); ok {
		if n, ok := asInt(v); ok && n > 0 && n < max {
			max = n
		}
	}
	e.Docs = c.docsFrom(repos, max)
	e.NewDocs = nil
	if len(e.Docs) > 0 {
		e.NewDocs = e.Docs[:(len(e.Docs)+2)/3]
	}
	e.Status, e.CurrentStage = "completed", "complete"
	e.End = at.UTC().Format(isoZ)
	e.LastSeen = at.UTC().Format(isoUTC)
	e.ResultCount, e.NewCount = len(e.Docs), len(e.NewDocs)
	e.Dedup = []int{e.ResultCount, e.NewCount, e.ResultCount - e.NewCount, 0, 0}
	e.ResultPath = fmt.Sprintf("/home/resmon/.local/share/resmon/reports/exec_%d.md", e.ID)
	e.Sources = nil
	stamp := at.UTC().Format(sqlTime)
	for _, slug := range repos {
		n := 0
		for _, id := range e.Docs {
			if c.doc(id).Source == slug {
				n++
			}
		}
		cat, known := catalogBySlug(slug)
		switch {
		case !known:
			e.Sources = append(e.Sources, sourceRow{slug, "error", 0, "upstream_failure", stamp})
		case cat.keyReq == "required" && c.creds[cat.cred] != "present":
			e.Sources = append(e.Sources, sourceRow{slug, "skipped_missing_key", 0, "missing_key", stamp})
		case n == 0:
			e.Sources = append(e.Sources, sourceRow{slug, "ok", 0, "answered_empty", stamp})
		default:
			e.Sources = append(e.Sources, sourceRow{slug, "ok", n, "", stamp})
		}
	}
	e.ProgressEvents = pyDumps([]any{
		o("type", "execution_start", "execution_id", e.ID, "timestamp", e.Start),
		o("type", "complete", "execution_id", e.ID, "result_count", e.ResultCount, "timestamp", e.End)})
}

func (c *corpus) running() []*execution {
	var rs []*execution
	for _, e := range c.execs {
		if e.Status == "running" {
			rs = append(rs, e)
		}
	}
	return rs
}

// paramRepos is the selection: repositories, or the singular repository of a dive.
func paramRepos(p obj) []string {
	if v, ok := p.get("repositories"); ok {
		if l, ok := v.([]any); ok {
			var out []string
			seen := map[string]bool{}
			for _, x := range l {
				if s, ok := x.(string); ok && !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
			return out
		}
	}
	if v, ok := p.get("repository"); ok {
		if s, ok := v.(string); ok && s != "" {
			return []string{s}
		}
	}
	return nil
}
