package activity

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestOutcomeNamesHowACallEnded(t *testing.T) {
	for _, c := range []struct {
		code, confirmation string
		unknown            bool
		want               string
	}{
		{"", "", false, OutcomeOK},
		{"", "asked_yes", false, OutcomeOK},
		{"", "remembered", false, OutcomeOK},
		{"not_found", "", false, "not_found"},
		{"upstream_error", "", false, OutcomeUpstream},
		{"internal_error", "asked_yes", true, OutcomeUnknown},
		{"invalid_argument", "declined", false, OutcomeDeclined},
		{"invalid_argument", "cancelled", false, OutcomeCancelled},
		{"invalid_argument", "timed_out", false, OutcomeTimedOut},
		{"invalid_argument", "cannot_ask", false, OutcomeCannotAsk},
		{"invalid_argument", "policy_off", false, OutcomeRefused},
		{"", "harness", false, OutcomeOK},
		{"conflict", "asked", false, "asked"},
		{"conflict", "session_closed", false, "session_closed"},
	} {
		if got := Outcome(c.code, c.confirmation, c.unknown); got != c.want {
			t.Errorf("Outcome(%q, %q, %v) = %q, want %q", c.code, c.confirmation, c.unknown, got, c.want)
		}
	}
}

func rec(i int) Record {
	return Record{Time: time.Unix(int64(1_800_000_000+i), 0).UTC(), Session: uint64(i), Tool: "health", Outcome: OutcomeOK}
}

// The memory keeps the last records in order; the file gets every one, one JSON line each;
// a new Log loads the last ones back from it.
func TestLogKeepsTheLastRecordsAndReloadsThem(t *testing.T) {
	var file bytes.Buffer
	l := New(&file, 3)
	for i := 1; i <= 5; i++ {
		l.Add(rec(i))
	}
	got := l.Records()
	if len(got) != 3 || got[0].Session != 3 || got[2].Session != 5 {
		t.Fatalf("kept %+v, want sessions 3, 4, 5", got)
	}
	if n := strings.Count(file.String(), "\n"); n != 5 {
		t.Fatalf("the file has %d lines, want 5:\n%s", n, file.String())
	}
	again := New(nil, 2)
	again.Load(strings.NewReader(file.String() + "not json\n{}\n"))
	got = again.Records()
	if len(got) != 2 || got[0].Session != 4 || got[1].Session != 5 {
		t.Fatalf("reloaded %+v, want sessions 4, 5 (bad lines skipped)", got)
	}
}

// A follower gets every record added after it started; one that falls FollowBuffer behind
// is cut off (its channel closed) instead of slowing the daemon.
func TestFollowersGetNewRecordsAndASlowOneIsCutOff(t *testing.T) {
	l := New(nil, 10)
	l.Add(rec(1))
	history, live, stop := l.Follow()
	defer stop()
	if len(history) != 1 {
		t.Fatalf("history %+v", history)
	}
	l.Add(rec(2))
	if r := <-live; r.Session != 2 {
		t.Fatalf("followed %+v", r)
	}
	for i := 0; i <= FollowBuffer; i++ {
		l.Add(rec(3 + i))
	}
	n := 0
	for range live {
		n++
	}
	if n != FollowBuffer {
		t.Fatalf("a slow follower got %d records before being cut off, want %d", n, FollowBuffer)
	}
}

func TestSinceTakesADurationOrATime(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	if got, err := parseSince("90m", now); err != nil || !got.Equal(now.Add(-90*time.Minute)) {
		t.Errorf("90m: %v %v", got, err)
	}
	if got, err := parseSince("2026-12-05T10:00:00Z", now); err != nil || got.Hour() != 10 {
		t.Errorf("time: %v %v", got, err)
	}
	if _, err := parseSince("yesterday", now); err == nil {
		t.Error("yesterday was accepted")
	}
}

// A daemon followed again sends its whole history: only what was not printed yet comes out,
// records at the same instant told apart by their contents.
func TestShownPrintsEachRecordOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	a := Record{Time: t0, Session: 1, Tool: "health"}
	b := Record{Time: t0, Session: 2, Tool: "health"} // same instant, another call
	c := Record{Time: t0.Add(time.Second), Session: 1, Tool: "list_routines"}
	d := Record{Time: t0.Add(2 * time.Second), Session: 1, Tool: "get_routine"}
	var s shown
	if got := s.after([]Record{a}, time.Time{}); len(got) != 1 {
		t.Fatalf("first: %v", got)
	}
	got := s.after([]Record{a, b, c}, time.Time{})
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Fatalf("again with more: %v", got)
	}
	if got := s.after([]Record{a, b, c, d}, t0.Add(2*time.Second)); len(got) != 1 || got[0] != d {
		t.Fatalf("since and seen: %v", got)
	}
	if got := s.after([]Record{a, b, c, d}, time.Time{}); len(got) != 0 {
		t.Fatalf("nothing new: %v", got)
	}
}
