package initializer

import (
	"context"
	"errors"
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
