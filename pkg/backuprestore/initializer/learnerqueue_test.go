package initializer

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// A scale-up from one member to three: both new members find the cluster quorate and want to join as
// learners (case 5), and etcd admits one learner at a time. The second is added as soon as the first is
// promoted, not a poll interval later (an hour here, which the test does not wait for).
func TestSecondLearnerJoinsOnceTheFirstIsPromoted(t *testing.T) {
	h := newHarness(t, 3)
	full := h.initial
	h.initial = full[:1] // the single member the cluster was before the scale-up
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	h.initial = full

	h.initialize(2, CaseQuorateInvalidMetadata)
	second := h.initializer(1, func(o *Options) { o.PollInterval = time.Hour })
	done := make(chan error, 1)
	go func() { done <- second.Initialize(context.Background(), podwire.InitFull) }()
	// Member 2 is the pending learner: member 1 is refused until it is promoted.
	h.start(2)
	h.promote(2)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("etcd-main-1: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("etcd-main-1 was not added as a learner after etcd-main-2 was promoted")
	}
	if st := second.State(); st.Case != CaseQuorateInvalidMetadata || st.ClusterState != "existing" {
		t.Fatalf("etcd-main-1 state %+v, want to join as a learner", st)
	}
	h.nodes[1].lastInitalized = second.State()
	h.start(1)
	h.promote(1)
	rev := putN(t, h.client(), "k/", 10)
	h.requireSameData(1, 0, rev)
	h.requireSameData(2, 0, rev)
}

// A scale-up's new member asks every other member's client URL, among them the other new members, which
// do not answer yet (their names may not even resolve). Once the running members answer with a quorate
// member list, the decision does not wait for those: here one never answers, and the probe timeout is an
// hour, which the test does not wait for.
func TestQuorateClusterIsJoinedWithoutWaitingForSilentMembers(t *testing.T) {
	h := newHarness(t, 3)
	full := h.initial
	h.initial = full[:1]
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	h.initial = full
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() { // accepts connections and never answers
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	h.nodes[1].client = url.URL{Scheme: "http", Host: silent.Addr().String()}

	in := h.initializer(2, func(o *Options) { o.ProbeTimeout = time.Hour })
	done := make(chan error, 1)
	go func() { done <- in.Initialize(context.Background(), podwire.InitFull) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("etcd-main-2: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("etcd-main-2 waited for a member that does not answer")
	}
	if st := in.State(); st.Case != CaseQuorateInvalidMetadata || st.ClusterState != "existing" {
		t.Fatalf("etcd-main-2 state %+v, want to join as a learner", st)
	}
}

func TestOtherLearnerIgnoresSelfAndVoters(t *testing.T) {
	self := memberconfig.Member{Name: "etcd-main-1", PeerURLs: []string{"https://etcd-main-1:2380"}}
	voter := &etcdserverpb.Member{Name: "etcd-main-0", PeerURLs: []string{"https://etcd-main-0:2380"}}
	selfUnstarted := &etcdserverpb.Member{PeerURLs: []string{"https://etcd-main-1:2380"}, IsLearner: true}
	other := &etcdserverpb.Member{PeerURLs: []string{"https://etcd-main-2:2380"}, IsLearner: true}
	if got := otherLearner([]*etcdserverpb.Member{voter, selfUnstarted}, self); got != "" {
		t.Fatalf("otherLearner = %q, want none", got)
	}
	if got := otherLearner([]*etcdserverpb.Member{voter, other}, self); got != "https://etcd-main-2:2380" {
		t.Fatalf("otherLearner = %q, want the unstarted learner by its peer URL", got)
	}
	other.Name = "etcd-main-2"
	if got := otherLearner([]*etcdserverpb.Member{voter, other}, self); got != "etcd-main-2" {
		t.Fatalf("otherLearner = %q, want etcd-main-2", got)
	}
}
