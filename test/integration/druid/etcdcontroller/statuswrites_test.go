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

// A creation costs the apiserver two status writes: lastOperation Processing when the spec run starts, and
// one write that carries the run's success (observedGeneration, lastOperation Succeeded, SecretsReady)
// together with what the status flow observed (members, health conditions, replicas). Every status write
// of an Etcd is a full decode, validation and encode of the object in the apiserver and a watch event to
// every druid replica, and a burst of new Etcds writes them hundreds at a time. The test watches every
// version of the stored Etcd until its first observedGeneration.
func TestCreationWritesTheStatusTwice(t *testing.T) {
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

	g.Expect(statuses).To(HaveLen(3), "the empty status at creation, Processing, then the run's success with the observation")
	g.Expect(statuses[1].LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateProcessing))
	done := statuses[2]
	g.Expect(done.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateSucceeded))
	g.Expect(done.LastOperation.RunID).To(Equal(statuses[1].LastOperation.RunID), "the same run")
	for _, ct := range []druidv1alpha1.ConditionType{etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionTypeReady,
		druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTypeAllMembersUpdated, druidv1alpha1.ConditionTypeDataVolumesReady} {
		g.Expect(druidv1alpha1.FindCondition(done.Conditions, ct)).NotTo(BeNil(), "condition %s comes with the success", ct)
	}
	g.Expect(done.Etcd).NotTo(BeNil(), "the StatefulSet the run created is in the status written with the success")
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeNil(), "the cluster size is recorded on the StatefulSet")
}
