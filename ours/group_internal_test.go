package ours

import "testing"

// A private group that lists another member is not private (OpenSSH asks the same of a
// group-writable file): that member could change what the owner's group may write.
func TestPrivateGroupWithAnotherMemberIsShared(t *testing.T) {
	file := []byte("root:x:0:\nalice:x:1000:\nbob:x:1001:alice\ncarol:x:1002:carol\n")
	for _, tc := range []struct {
		group, user string
		want        bool
	}{
		{"alice", "alice", true}, // no members listed
		{"carol", "carol", true}, // only herself
		{"bob", "bob", false},    // alice is in bob's group
		{"dave", "dave", true},   // not listed at all
	} {
		if got := onlyMemberListed(file, tc.group, tc.user); got != tc.want {
			t.Errorf("group %s for %s: private %v, want %v", tc.group, tc.user, got, tc.want)
		}
	}
}

// A group is private only with the user's own number: another id never is, whatever its name.
func TestPrivateGroupNeedsTheUsersOwnID(t *testing.T) {
	if privateGroup(1000, 1001) || privateGroup(0, 65534) {
		t.Fatal("a group with another id counted as the user's private group")
	}
}
