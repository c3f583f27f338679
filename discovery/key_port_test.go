package discovery

import "testing"

// B2: Key uses the candidates' own port parser, so a value it refuses never shares a key
// (a watcher) with the valid port it resembles, while spellings it accepts still do.
func TestKeyFollowsThePortParser(t *testing.T) {
	good := Target{Port: "36721", StateDir: "/s"}
	for _, bad := range []string{"+36721", "0036721", "36721.0", " +36721 ", "0x8ff1"} {
		b := Target{Port: bad, StateDir: "/s"}
		if _, ok := parsePort(bad); ok {
			t.Fatalf("parsePort accepts %q; pick a value it refuses", bad)
		}
		if b.Key() == good.Key() {
			t.Errorf("RESMON_PORT=%q shares a key with %q: %s", bad, good.Port, b.Key())
		}
		if b.Key() == (Target{StateDir: "/s"}).Key() {
			t.Errorf("RESMON_PORT=%q shares a key with no RESMON_PORT", bad)
		}
	}
	for _, same := range []string{" 36721", "36721\n", "036721"} {
		if s := (Target{Port: same, StateDir: "/s"}); s.Key() != good.Key() {
			t.Errorf("accepted spelling %q has its own key %s", same, s.Key())
		}
	}
}
