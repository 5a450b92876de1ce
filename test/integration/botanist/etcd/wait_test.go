package etcd_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func TestWaitReportsWhatIsMissingAndSucceedsOnceDruidReportsReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	short := values(etcd.RoleEvents)
	short.WaitTimeout = 500 * time.Millisecond
	component := etcd.New(env.Client, namespace, short)

	g.Expect(component.Wait(ctx)).To(MatchError(ContainSubstring("waiting for: it does not exist")))
	g.Expect(component.Deploy(ctx)).To(Succeed())
	err := component.Wait(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("etcd " + namespace + "/etcd-events not ready after 500ms")))
	g.Expect(err).To(MatchError(ContainSubstring("no observedGeneration")))
	g.Expect(err).To(MatchError(ContainSubstring("annotation gardener.cloud/operation=reconcile is still set")))
	g.Expect(err).To(MatchError(ContainSubstring("no conditions reported")))

	// Druid reconciled the spec but the StatefulSet cannot be synced.
	obj := getEtcd(g, namespace, "etcd-events")
	now := metav1.Now()
	obj.Status.ObservedGeneration = ptr.To(obj.Generation)
	obj.Status.Ready = ptr.To(false)
	obj.Status.LastErrors = []druidv1alpha1.LastError{{Code: "ERR_SYNC_STATEFULSET", Description: "secret etcd-client not found", ObservedAt: now}}
	obj.Status.Conditions = []druidv1alpha1.Condition{
		{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionFalse, Reason: druidv1alpha1.ReasonQuorumLost, Message: "0 of 1 members ready", LastTransitionTime: now, LastUpdateTime: now},
		{Type: druidv1alpha1.ConditionTypeAllMembersUpdated, Status: druidv1alpha1.ConditionFalse, Reason: druidv1alpha1.ReasonNotAllMembersUpdated, Message: "0 of 1 updated", LastTransitionTime: now, LastUpdateTime: now},
	}
	g.Expect(env.Client.Status().Update(ctx, obj)).To(Succeed())
	patch := client.MergeFrom(obj.DeepCopy())
	delete(obj.Annotations, druidv1alpha1.GardenerOperationAnnotation)
	g.Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())

	err = component.Wait(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("last error ERR_SYNC_STATEFULSET: secret etcd-client not found")))
	g.Expect(err).To(MatchError(ContainSubstring("condition Ready=False (QuorumLost: 0 of 1 members ready)")))
	g.Expect(err).To(MatchError(ContainSubstring("condition AllMembersUpdated is not True")))
	g.Expect(err).To(MatchError(ContainSubstring("status.ready is not true")))
	g.Expect(err.Error()).NotTo(ContainSubstring("observedGeneration"))

	// The next Deploy asks again; this time druid succeeds.
	g.Expect(component.Deploy(ctx)).To(Succeed())
	runDruid(t, namespace)
	g.Expect(etcd.New(env.Client, namespace, values(etcd.RoleEvents)).Wait(ctx)).To(Succeed())
	ready := getEtcd(g, namespace, "etcd-events")
	g.Expect(ready.Status.LastErrors).To(BeEmpty())
	g.Expect(*ready.Status.ObservedGeneration).To(Equal(ready.Generation))
}

func TestDestroyIsIdempotentAndWaitCleanupWaitsForTheFinalizer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	short := values(etcd.RoleEvents)
	short.WaitTimeout = 500 * time.Millisecond
	component := etcd.New(env.Client, namespace, short)
	g.Expect(component.Destroy(ctx)).To(Succeed(), "nothing to delete is not an error")
	g.Expect(component.Deploy(ctx)).To(Succeed())

	// druid's finalizer keeps the Etcd until its objects are gone.
	obj := getEtcd(g, namespace, "etcd-events")
	patch := client.MergeFrom(obj.DeepCopy())
	obj.Finalizers = append(obj.Finalizers, druidv1alpha1.FinalizerName)
	g.Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())

	g.Expect(component.Destroy(ctx)).To(Succeed())
	deleting := getEtcd(g, namespace, "etcd-events")
	g.Expect(deleting.DeletionTimestamp).NotTo(BeNil())
	g.Expect(deleting.Annotations).To(HaveKeyWithValue(etcd.ConfirmDeletionAnnotation, "true"))
	g.Expect(component.Destroy(ctx)).To(Succeed(), "a second Destroy while deleting is fine")
	g.Expect(component.WaitCleanup(ctx)).To(MatchError(And(
		ContainSubstring("still exists after 500ms"),
		ContainSubstring(druidv1alpha1.FinalizerName))))

	patch = client.MergeFrom(deleting.DeepCopy())
	deleting.Finalizers = nil
	g.Expect(env.Client.Patch(ctx, deleting, patch)).To(Succeed())
	g.Expect(component.WaitCleanup(ctx)).To(Succeed())
	g.Expect(etcdExists(namespace, "etcd-events")).To(BeFalse())
	g.Expect(component.Destroy(ctx)).To(Succeed())
}
