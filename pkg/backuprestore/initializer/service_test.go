package initializer

import (
	"os"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/tripwire"
)

// A member that joins a running cluster (here one whose data was wiped; a scale-up's new member takes
// the same path) learns the cluster through the client Service and joins as a learner through it and the
// started members it lists: no other member is asked by name, since the other new members of a scale-up
// may not have an address yet, and a "no such name" the seed's DNS caches would keep the leader from
// reaching them.
func TestAJoiningMemberAsksTheServiceAndNoMemberByName(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	putN(t, h.client(), "k/", 20)
	h.stop(2)
	if err := os.RemoveAll(h.nodes[2].dataDir); err != nil {
		t.Fatal(err)
	}
	byName := []*tripwire.Wire{tripwire.New(t), tripwire.New(t)} // members whose pods may have no address yet
	service := h.nodes[0].client.String()
	in := h.initializer(2, func(o *Options) {
		o.ClusterEndpoints = []string{byName[0].URL(), byName[1].URL(), service}
		o.ServiceEndpoints = []string{service}
	})
	if err := in.Initialize(t.Context(), podwire.InitFull); err != nil {
		t.Fatal(err)
	}
	st := in.State()
	if st.Case != CaseQuorateInvalidMetadata || len(st.JoinMembers) != 3 {
		t.Fatalf("state %+v, want to join the 3 members as a learner", st)
	}
	for i, w := range byName {
		if n := w.Connections(); n > 0 {
			t.Fatalf("member endpoint %d was dialed %d times, want only the Service", i, n)
		}
	}
	h.nodes[2].lastInitalized = st
	h.start(2)
	h.promote(2)
	h.requireSameData(2, 0, putN(t, h.client(), "after/", 5))
}

// The Service is only a shortcut: with nobody behind it (a Service without Ready members refuses the
// connection) or a member behind it without a leader, every member is asked as before, and the decision is
// the one those answers give.
func TestWithoutALeaderBehindTheServiceEveryMemberIsAsked(t *testing.T) {
	t.Run("nobody behind the Service", func(t *testing.T) {
		h := newHarness(t, 3)
		h.bootstrap()
		h.stop(2)
		if err := os.RemoveAll(h.nodes[2].dataDir); err != nil {
			t.Fatal(err)
		}
		empty := etcdserver.FreeURL(t)
		in := h.initializer(2, func(o *Options) {
			o.ClusterEndpoints = append(o.ClusterEndpoints, empty.String())
			o.ServiceEndpoints = []string{empty.String()}
		})
		f, err := in.Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c := Decide(f); c != CaseQuorateInvalidMetadata || len(f.Cluster.Endpoints) != 3 {
			t.Fatalf("decided %s through %v, want to rejoin through the members", c, f.Cluster.Endpoints)
		}
	})
	t.Run("no leader behind the Service", func(t *testing.T) {
		h := newHarness(t, 3)
		h.bootstrap()
		putN(t, h.client(), "k/", 10)
		h.stop(0, 2)
		if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
			t.Fatal(err)
		}
		in := h.initializer(0, func(o *Options) {
			o.ServiceEndpoints = []string{h.nodes[1].client.String()}
			o.QuorumWait = time.Second
		})
		f, err := in.Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c := Decide(f); c != CaseNonQuorateFollowingWait || !f.Cluster.Reachable {
			t.Fatalf("decided %s with facts %+v, want to wait for the reachable, non-quorate cluster", c, f.Cluster)
		}
	})
}
