package statefulset

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestDecideReplicas(t *testing.T) {
	cases := []struct {
		name          string
		in            ReplicaInput
		replicas      int32
		requeue       bool
		reasonContain string
	}{
		{"create uses spec replicas even with peer TLS", ReplicaInput{Exists: false, Desired: 3, PeerTLSInSpec: true}, 3, false, ""},
		{"no change", ReplicaInput{Exists: true, Current: 3, Desired: 3, PeerTLSInSpec: true}, 3, false, ""},
		{"scale-down is not held back", ReplicaInput{Exists: true, Current: 5, Desired: 3, PeerTLSInSpec: true}, 3, false, ""},
		{"hibernation", ReplicaInput{Exists: true, Current: 3, Desired: 0, PeerTLSInSpec: true}, 0, false, ""},
		{"wake-up from zero has no member to switch", ReplicaInput{Exists: true, Current: 0, Desired: 3, PeerTLSInSpec: true}, 3, false, ""},
		{"scale-up without peer TLS", ReplicaInput{Exists: true, Current: 1, Desired: 3}, 3, false, ""},
		{"peer TLS newly enabled: patch at current replicas", ReplicaInput{Exists: true, Current: 1, Desired: 3, PeerTLSInSpec: true,
			PeerTLSVolumesUpToDate: false, AllMembersPeerTLSEnabled: false}, 1, true, "newly enabled"},
		{"volumes newly enabled wins even if a stale lease says true", ReplicaInput{Exists: true, Current: 1, Desired: 3, PeerTLSInSpec: true,
			PeerTLSVolumesUpToDate: false, AllMembersPeerTLSEnabled: true}, 1, true, "newly enabled"},
		{"volumes in place, lease still false", ReplicaInput{Exists: true, Current: 1, Desired: 3, PeerTLSInSpec: true,
			PeerTLSVolumesUpToDate: true, AllMembersPeerTLSEnabled: false}, 1, true, "every existing member lease"},
		{"all members report TLS: raise", ReplicaInput{Exists: true, Current: 1, Desired: 3, PeerTLSInSpec: true,
			PeerTLSVolumesUpToDate: true, AllMembersPeerTLSEnabled: true}, 3, false, ""},
		{"3 to 5 waits for all three members", ReplicaInput{Exists: true, Current: 3, Desired: 5, PeerTLSInSpec: true,
			PeerTLSVolumesUpToDate: true, AllMembersPeerTLSEnabled: false}, 3, true, "from 3 to 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			d := DecideReplicas(c.in)
			g.Expect(d.Replicas).To(Equal(c.replicas))
			g.Expect(d.Requeue).To(Equal(c.requeue))
			if c.requeue {
				g.Expect(d.Reason).To(ContainSubstring(c.reasonContain))
			} else {
				g.Expect(d.Reason).To(BeEmpty())
			}
		})
	}
}
