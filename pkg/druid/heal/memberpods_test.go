package heal

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// labelledPod is a pod with the Etcd's member labels, controlled by owner (nil: no owner) with the owner's
// UID or, when uid is set, that UID.
func labelledPod(etcd *druidv1alpha1.Etcd, name string, owner *appsv1.StatefulSet, uid types.UID) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace, Labels: druidv1alpha1.ManagedLabels(etcd)}}
	if owner != nil {
		if uid == "" {
			uid = owner.UID
		}
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: owner.Name, UID: uid, Controller: ptr.To(true)}}
	}
	return pod
}

// Step 2 of the quorum-loss recovery waits for the StatefulSet's pods to be gone. A pod a stranger labelled
// as a member (no owner, or a forged owner reference) must not hold the recovery there forever.
func TestStep2IgnoresPodsTheStatefulSetDoesNotOwn(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "sts-uid"}}
	stranger := labelledPod(etcd, "stranger", nil, "")
	forged := labelledPod(etcd, "etcd-main-0", sts, "forged")
	reader := fake.NewClientBuilder().WithObjects(stranger, forged).Build()
	h := &healRun{deps: Deps{Reader: reader, Clock: clock.RealClock{}}, etcd: etcd, outcome: Outcome{Observed: health.Observed{Etcd: etcd.DeepCopy()}}}

	done, err := h.waitForMemberPodsGone(context.Background(), sts)
	if err != nil || !done {
		t.Fatalf("waitForMemberPodsGone = %v, %v; want done: no pod of the StatefulSet is left", done, err)
	}

	member := labelledPod(etcd, "etcd-main-1", sts, "")
	reader = fake.NewClientBuilder().WithObjects(stranger, member).Build()
	h = &healRun{deps: Deps{Reader: reader, Clock: clock.RealClock{}}, etcd: etcd, outcome: Outcome{Observed: health.Observed{Etcd: etcd.DeepCopy()}}}
	done, err = h.waitForMemberPodsGone(context.Background(), sts)
	if err != nil || done {
		t.Fatalf("waitForMemberPodsGone = %v, %v; want not done while the StatefulSet's pod exists", done, err)
	}
}

// A member pod without any owner (orphaned while its StatefulSet was recreated, or by `kubectl delete
// --cascade=orphan`) may still run etcd on its volume: step 2 waits for it like for the StatefulSet's own
// pods, and quorum-loss confirmation sees it.
func TestStep2WaitsForOrphanedMemberPods(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "sts-uid"}}
	orphan := labelledPod(etcd, "etcd-main-2", nil, "")
	reader := fake.NewClientBuilder().WithObjects(orphan).Build()
	h := &healRun{deps: Deps{Reader: reader, Clock: clock.RealClock{}}, etcd: etcd, outcome: Outcome{Observed: health.Observed{Etcd: etcd.DeepCopy()}}}

	done, err := h.waitForMemberPodsGone(context.Background(), sts)
	if err != nil || done {
		t.Fatalf("waitForMemberPodsGone = %v, %v; want not done while an orphaned member pod exists", done, err)
	}
	pods, err := listMemberPods(context.Background(), reader, etcd, sts)
	if err != nil || pods["etcd-main-2"] == nil {
		t.Fatalf("listMemberPods = %v, %v; want the orphaned member pod etcd-main-2", pods, err)
	}
}
