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
		{"scale-in once the dropped members left the cluster", ReplicaInput{Exists: true, Current: 5, Desired: 3, PeerTLSInSpec: true}, 3, false, ""},
		{"3 to 1 waits while members are still in the cluster", ReplicaInput{Exists: true, Current: 3, Desired: 1,
			MembersStillInCluster: []string{"etcd-main-2", "etcd-main-1"}}, 3, true, "removed etcd-main-2, etcd-main-1 from the etcd membership"},
		{"5 to 1 waits for the last member too", ReplicaInput{Exists: true, Current: 5, Desired: 1,
			MembersStillInCluster: []string{"etcd-main-1"}}, 5, true, "scale-in from 5 to 1"},
		{"5 to 3 waits as well (no dead voters in between)", ReplicaInput{Exists: true, Current: 5, Desired: 3,
			MembersStillInCluster: []string{"etcd-main-3"}}, 5, true, "scale-in from 5 to 3"},
		{"3 to 1 once both left", ReplicaInput{Exists: true, Current: 3, Desired: 1}, 1, false, ""},
		{"hibernation", ReplicaInput{Exists: true, Current: 3, Desired: 0, PeerTLSInSpec: true}, 0, false, ""},
		{"hibernation removes no member and waits for none", ReplicaInput{Exists: true, Current: 3, Desired: 0,
			MembersStillInCluster: []string{"etcd-main-2", "etcd-main-1", "etcd-main-0"}}, 0, false, ""},
		{"create never waits", ReplicaInput{Exists: false, Current: 0, Desired: 1, MembersStillInCluster: []string{"etcd-main-1"}}, 1, false, ""},
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
			g.Expect(d.ScaleIn).To(Equal(c.requeue && c.in.Desired < c.in.Current))
			if c.requeue {
				g.Expect(d.Reason).To(ContainSubstring(c.reasonContain))
			} else {
				g.Expect(d.Reason).To(BeEmpty())
			}
		})
	}
}
