package etcdcontroller_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// A creation costs the apiserver one status write: the run's success (observedGeneration, lastOperation
// Succeeded, SecretsReady) together with what the status flow observed (members, health conditions,
// replicas). A new Etcd's run writes no lastOperation Processing first: its finalizer write is the run's
// first write under the cached resourceVersion. Every status write of an Etcd is a full decode,
// validation and encode of the object in the apiserver and a watch event to every druid replica, and a
// burst of new Etcds writes them hundreds at a time. The test watches every version of the stored Etcd
// until its first observedGeneration, and then checks that a later spec run still records Processing.
func TestCreationWritesTheStatusOnce(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	watcher, err := client.NewWithWatch(env.Config, client.Options{Scheme: envtest.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := watcher.Watch(ctx, &druidv1alpha1.EtcdList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()

	createEtcd(t, ns, 1)
	var statuses []druidv1alpha1.EtcdStatus // every distinct stored status, in order
	deadline := time.After(timeout)
	for len(statuses) == 0 || statuses[len(statuses)-1].ObservedGeneration == nil {
		select {
		case ev, ok := <-w.ResultChan():
			g.Expect(ok).To(BeTrue(), "watch ended")
			g.Expect(ev.Type).To(BeElementOf(watch.Added, watch.Modified), "%+v", ev.Object)
			etcd := ev.Object.(*druidv1alpha1.Etcd)
			if len(statuses) > 0 && equality.Semantic.DeepEqual(statuses[len(statuses)-1], etcd.Status) {
				continue // a metadata write (finalizer)
			}
			statuses = append(statuses, etcd.Status)
		case <-deadline:
			t.Fatalf("no observedGeneration after %s; statuses: %+v", timeout, statuses)
		}
	}

	g.Expect(statuses).To(HaveLen(2), "the empty status at creation, then the run's success with the observation")
	done := statuses[1]
	g.Expect(done.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateSucceeded))
	g.Expect(done.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeCreate))
	for _, ct := range []druidv1alpha1.ConditionType{etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionTypeReady,
		druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTypeAllMembersUpdated, druidv1alpha1.ConditionTypeDataVolumesReady} {
		g.Expect(druidv1alpha1.FindCondition(done.Conditions, ct)).NotTo(BeNil(), "condition %s comes with the success", ct)
	}
	g.Expect(done.Etcd).NotTo(BeNil(), "the StatefulSet the run created is in the status written with the success")
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeNil(), "the cluster size is recorded on the StatefulSet")

	// A spec run on an Etcd that has its finalizer writes Processing first, the guard against a stale cache.
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
	var processing *druidv1alpha1.LastOperation
	deadline = time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			g.Expect(ok).To(BeTrue(), "watch ended")
			op := ev.Object.(*druidv1alpha1.Etcd).Status.LastOperation
			if op == nil || op.Type != druidv1alpha1.LastOperationTypeReconcile {
				continue
			}
			if op.State == druidv1alpha1.LastOperationStateProcessing && processing == nil {
				processing = op
			}
			if op.State == druidv1alpha1.LastOperationStateSucceeded {
				g.Expect(processing).NotTo(BeNil(), "the reconcile succeeded without writing Processing first")
				g.Expect(op.RunID).To(Equal(processing.RunID), "the same run")
				return
			}
		case <-deadline:
			t.Fatalf("the reconcile did not succeed within %s (Processing seen: %v)", timeout, processing != nil)
		}
	}
}
