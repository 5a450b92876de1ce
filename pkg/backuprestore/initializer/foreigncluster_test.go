package initializer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// A member of an Etcd that names an existing cluster, without data, whose only other endpoint is the
// source's: while the cluster ID recorded for the Etcd is another than the one answering there, it refuses
// (ErrForeignCluster) and adds no member to that cluster; with the answering cluster's ID recorded (or
// none recorded yet, the first join) it joins as a learner.
func TestJoiningMemberJoinsOnlyTheRecordedCluster(t *testing.T) {
	source := etcdserver.Start(t).Members[0]
	sourceID := uint64(source.Etcd.Server.Cluster().ID())
	h := newHarness(t, 1)
	join := func(recorded uint64) (*Initializer, error) {
		in := h.initializer(0, func(o *Options) {
			o.ExistingCluster = memberconfig.InitialCluster{{Name: "etcd-old-0", PeerURLs: []string{source.Config.PeerURL.String()}}}
			o.ClusterEndpoints = []string{source.Endpoint()}
			o.OwnClusterID, o.QuorumWait = recorded, time.Second
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		return in, in.Initialize(ctx, podwire.InitFull)
	}
	members := func() int {
		list, err := source.Client(t).MemberList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Members)
	}

	if _, err := join(sourceID + 1); !errors.Is(err, ErrForeignCluster) {
		t.Fatalf("joining with another cluster recorded: %v, want %v", err, ErrForeignCluster)
	}
	if n := members(); n != 1 {
		t.Fatalf("the other cluster has %d members, want its own only", n)
	}
	if aside := MovedAside(h.nodes[0].dataDir); len(aside) != 0 {
		t.Fatalf("moved aside %v", aside)
	}

	for _, recorded := range []uint64{sourceID, 0} {
		in, err := join(recorded)
		if err != nil {
			t.Fatalf("joining with %x recorded: %v", recorded, err)
		}
		if st := in.State(); st.Case != CaseQuorateInvalidMetadata || st.ClusterState != memberconfig.ClusterStateExisting {
			t.Fatalf("joining with %x recorded: state %+v, want to join as a learner", recorded, st)
		}
		if n := members(); n != 2 {
			t.Fatalf("joining with %x recorded: the cluster has %d members, want the source and the learner", recorded, n)
		}
	}
}

// While the member leases record no cluster (e.g. a hibernation removed them), an Etcd's own members tell
// its cluster: a member without data joins the cluster one of them answers for, never the other cluster
// at the source's endpoint; when its own members answer for different clusters it joins neither.
func TestJoiningMemberFollowsItsOwnMembersWhileNothingIsRecorded(t *testing.T) {
	ownMember, foreign := etcdserver.Start(t).Members[0], etcdserver.Start(t).Members[0]
	h := newHarness(t, 1)
	join := func(members ...*etcdserver.Member) (*Initializer, error) {
		in := h.initializer(0, func(o *Options) {
			o.ExistingCluster = memberconfig.InitialCluster{{Name: "etcd-old-0", PeerURLs: []string{foreign.Config.PeerURL.String()}}}
			o.MemberEndpoints = nil
			for _, m := range members {
				o.MemberEndpoints = append(o.MemberEndpoints, m.Endpoint())
			}
			o.ClusterEndpoints = append(slices.Clone(o.MemberEndpoints), foreign.Endpoint())
			o.QuorumWait = time.Second
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		return in, in.Initialize(ctx, podwire.InitFull)
	}
	members := func(m *etcdserver.Member) int {
		list, err := m.Client(t).MemberList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Members)
	}

	other := etcdserver.Start(t).Members[0]
	if _, err := join(ownMember, other); !errors.Is(err, ErrForeignCluster) {
		t.Fatalf("own members answering for two clusters: %v, want %v", err, ErrForeignCluster)
	}
	if n, m, f := members(ownMember), members(other), members(foreign); n != 1 || m != 1 || f != 1 {
		t.Fatalf("members %d, %d, %d: want no cluster joined", n, m, f)
	}

	in, err := join(ownMember)
	if err != nil {
		t.Fatal(err)
	}
	if st := in.State(); st.ClusterState != memberconfig.ClusterStateExisting {
		t.Fatalf("state %+v, want to join as a learner", st)
	}
	if n, f := members(ownMember), members(foreign); n != 2 || f != 1 {
		t.Fatalf("the own cluster has %d members, the one at the source endpoint %d: want the learner in the own cluster only", n, f)
	}
}

// A member of an Etcd that names an existing cluster restarts with valid data while none of its own
// members answers and its member leases record no cluster (a woken-up hibernated Etcd, whose leases are
// new; member lease renewal off), and another cluster answers at the source's endpoint. Its data tells its
// cluster: it reuses the data, moves nothing aside and adds no member to the other cluster.
func TestJoinedMemberWithValidDataNeverJoinsAnotherClusterWhileItsOwnMembersAreDown(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	putN(t, h.client(), "a/", 10)
	h.stop(0, 1, 2)
	foreign := etcdserver.Start(t).Members[0]

	in := h.initializer(0, func(o *Options) {
		o.ExistingCluster = memberconfig.InitialCluster{{Name: "etcd-old-0", PeerURLs: []string{foreign.Config.PeerURL.String()}}}
		o.MemberEndpoints = slices.Clone(o.ClusterEndpoints)
		o.ClusterEndpoints = append(o.ClusterEndpoints, foreign.Endpoint())
		o.OwnClusterID, o.QuorumWait = 0, time.Second
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := in.Initialize(ctx, podwire.InitFull); err != nil {
		t.Fatal(err)
	}
	if st := in.State(); st.Case != CaseNonQuorateValid || st.ClusterState != memberconfig.ClusterStateNew {
		t.Fatalf("state %+v, want the valid data reused (%s)", st, CaseNonQuorateValid)
	}
	if aside := MovedAside(h.nodes[0].dataDir); len(aside) != 0 {
		t.Fatalf("moved the valid data aside: %v", aside)
	}
	list, err := foreign.Client(t).MemberList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Members); n != 1 {
		t.Fatalf("the other cluster has %d members, want its own only", n)
	}
}
