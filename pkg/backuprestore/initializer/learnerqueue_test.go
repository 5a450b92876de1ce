package initializer

import (
	"context"
	"testing"
	"time"

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
