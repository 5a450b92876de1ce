package etcd

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestSpecReconcileWanted(t *testing.T) {
	etcd := func(generation int64, observed *int64, annotations map[string]string) *druidv1alpha1.Etcd {
		return &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Generation: generation, Annotations: annotations},
			Status: druidv1alpha1.EtcdStatus{ObservedGeneration: observed}}
	}
	gardenerOp := map[string]string{"gardener.cloud/operation": "reconcile"}
	druidOp := map[string]string{"druid.gardener.cloud/operation": "reconcile"}
	otherOp := map[string]string{"gardener.cloud/operation": "migrate"}
	for name, tc := range map[string]struct {
		etcd *druidv1alpha1.Etcd
		auto bool
		want bool
	}{
		"never reconciled, auto off":        {etcd: etcd(1, nil, nil), want: true},
		"reconciled, unchanged, auto off":   {etcd: etcd(1, ptr.To(int64(1)), nil)},
		"spec changed, auto off":            {etcd: etcd(2, ptr.To(int64(1)), nil)},
		"spec changed, gardener annotation": {etcd: etcd(2, ptr.To(int64(1)), gardenerOp), want: true},
		"unchanged, druid annotation":       {etcd: etcd(1, ptr.To(int64(1)), druidOp), want: true},
		"other operation value":             {etcd: etcd(2, ptr.To(int64(1)), otherOp)},
		"spec changed, auto on":             {etcd: etcd(2, ptr.To(int64(1)), nil), auto: true, want: true},
		"reconciled, unchanged, auto on":    {etcd: etcd(2, ptr.To(int64(2)), nil), auto: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := SpecReconcileWanted(tc.etcd, tc.auto)
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}

// readsCounter is a client.Reader that answers every Get with stored and counts the reads: whether the
// trigger reads the stored Etcd at all is the point, not what an apiserver would answer.
type readsCounter struct {
	client.Reader
	stored *druidv1alpha1.Etcd
	gets   int
}

func (r *readsCounter) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets++
	r.stored.DeepCopyInto(obj.(*druidv1alpha1.Etcd))
	return nil
}

// A new Etcd (no lastOperation: druid never ran a spec flow on it) is decided on as cached; once it
// was written to, with no write of this druid recorded, a due spec reconcile is decided again on the
// stored object, which may say "not due" (the cache lagged the previous run's observedGeneration).
func TestSpecReconcileWantedReadsTheStoredEtcdOnceDruidWroteIt(t *testing.T) {
	g := NewWithT(t)
	fresh := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	reconciled := fresh.DeepCopy()
	reconciled.Status = druidv1alpha1.EtcdStatus{ObservedGeneration: ptr.To(int64(1)),
		LastOperation: &druidv1alpha1.LastOperation{State: druidv1alpha1.LastOperationStateSucceeded}}
	processing := fresh.DeepCopy()
	processing.Status.LastOperation = &druidv1alpha1.LastOperation{State: druidv1alpha1.LastOperationStateProcessing}

	reader := &readsCounter{stored: reconciled}
	r := &Reconciler{reader: reader, clock: testclock.NewFakePassiveClock(time.Now())}
	wanted, _, err := r.specReconcileWanted(context.Background(), fresh.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wanted).To(BeTrue())
	g.Expect(reader.gets).To(BeZero(), "a new Etcd is not read again")

	cached := processing.DeepCopy()
	wanted, _, err = r.specReconcileWanted(context.Background(), cached)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reader.gets).To(Equal(1))
	g.Expect(wanted).To(BeFalse(), "the stored Etcd is reconciled already")
	g.Expect(cached.Status.ObservedGeneration).To(Equal(ptr.To(int64(1))), "the cached copy is replaced with the stored object")
}

// Once druid recorded its own write of an Etcd, a due spec reconcile is decided without reading the
// stored object: on the cached copy when it holds that write, not at all (the reconcile starts over) when
// it predates it. A record too old to be waited for, or versions that do not compare, fall back to the
// read.
func TestSpecReconcileWantedKnowsTheCacheFromDruidsOwnWrites(t *testing.T) {
	now := time.Now()
	due := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot", Name: "etcd-main", Generation: 2,
		Annotations: map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}},
		Status: druidv1alpha1.EtcdStatus{ObservedGeneration: ptr.To(int64(1)),
			LastOperation: &druidv1alpha1.LastOperation{State: druidv1alpha1.LastOperationStateSucceeded}}}
	withVersion := func(rv string) *druidv1alpha1.Etcd {
		e := due.DeepCopy()
		e.ResourceVersion = rv
		return e
	}
	for name, tc := range map[string]struct {
		written   string
		writtenAt time.Time
		cached    string
		wantErr   error
		wantGets  int
	}{
		"cache holds the write":          {written: "120", writtenAt: now, cached: "120"},
		"cache holds a newer version":    {written: "120", writtenAt: now, cached: "1000"},
		"cache predates the write":       {written: "120", writtenAt: now, cached: "99", wantErr: errCacheBehindOwnWrite},
		"write too long ago to wait for": {written: "120", writtenAt: now.Add(-time.Minute), cached: "99", wantGets: 1},
		"versions that do not compare":   {written: "120", writtenAt: now, cached: "v7", wantGets: 1},
		"no write recorded":              {cached: "99", wantGets: 1},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			reader := &readsCounter{stored: due}
			r := &Reconciler{reader: reader, clock: testclock.NewFakePassiveClock(now)}
			if tc.written != "" {
				r.own.record(withVersion(tc.written), tc.writtenAt)
			}
			wanted, _, err := r.specReconcileWanted(context.Background(), withVersion(tc.cached))
			if tc.wantErr != nil {
				g.Expect(err).To(MatchError(tc.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(wanted).To(BeTrue())
			}
			g.Expect(reader.gets).To(Equal(tc.wantGets))
		})
	}
}

// A new Etcd's run writes its finalizer, then its success. A reconcile that the run's own creations
// brought on may see the Etcd with the finalizer but without the success (no lastOperation yet): it starts
// over without a request instead of running a spec flow whose writes would conflict, and once the cache
// holds the success it decides on the cache alone.
func TestSpecReconcileWantedWaitsForANewEtcdsSuccessWrite(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	finalized := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot", Name: "etcd-main", Generation: 1,
		ResourceVersion: "11", Finalizers: []string{druidv1alpha1.FinalizerName}}}
	succeeded := finalized.DeepCopy()
	succeeded.ResourceVersion = "12"
	succeeded.Status = druidv1alpha1.EtcdStatus{ObservedGeneration: ptr.To(int64(1)),
		LastOperation: &druidv1alpha1.LastOperation{State: druidv1alpha1.LastOperationStateSucceeded}}

	reader := &readsCounter{stored: succeeded}
	r := &Reconciler{reader: reader, clock: testclock.NewFakePassiveClock(now)}
	r.own.record(finalized, now)
	r.own.record(succeeded, now)

	_, _, err := r.specReconcileWanted(context.Background(), finalized.DeepCopy())
	g.Expect(err).To(MatchError(errCacheBehindOwnWrite))
	wanted, _, err := r.specReconcileWanted(context.Background(), succeeded.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wanted).To(BeFalse(), "the run's success is cached")
	g.Expect(reader.gets).To(BeZero(), "decided on the cache alone")
}
