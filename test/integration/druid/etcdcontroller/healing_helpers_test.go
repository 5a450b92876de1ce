package etcdcontroller_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// holder is the holder identity the test's sidecar of ordinal i writes.
func holder(i int) string { return fmt.Sprintf("%016x:cdf818194e3a8c32:Member", i+1) }

// healthyCluster creates an Etcd with replicas members as a running cluster would look: reconciled, every
// pod ready, the StatefulSet rolled out and every sidecar renewing its lease; it waits for AllMembersReady.
func healthyCluster(t *testing.T, ns string, replicas int32, customize ...func(*druidv1alpha1.Etcd)) *sidecars {
	t.Helper()
	createEtcd(t, ns, replicas, customize...)
	waitReconciled(t, ns)
	holders := map[string]string{}
	for i := 0; i < int(replicas); i++ {
		createPod(t, ns, i, true)
		holders[fmt.Sprintf("%s-%d", etcdName, i)] = holder(i)
	}
	setStatefulSetRolledOut(t, ns, replicas)
	s := startSidecars(t, ns, holders)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	return s
}

// resume lets a stopped member's sidecar renew its lease again.
func (s *sidecars) resume(member, holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holders[member] = holder
}

// failMember stops the sidecar of ordinal i and marks its pod not ready, as a crashed member looks.
func failMember(t *testing.T, ns string, s *sidecars, i int) {
	t.Helper()
	name := fmt.Sprintf("%s-%d", etcdName, i)
	s.stop(name)
	setPodReady(t, ns, name, false)
}

func podUID(g Gomega, ns, name string) types.UID {
	pod := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
	return pod.UID
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func memberLease(g Gomega, ns, name string) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lease)).To(Succeed())
	return lease
}

// etcdEvents returns the events on the Etcd with the given reason (any type).
func etcdEvents(g Gomega, ns, reason string) []corev1.Event {
	list := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{
		"involvedObject.kind": "Etcd", "involvedObject.name": etcdName, "reason": reason,
	})).To(Succeed())
	return list.Items
}

// deletePods deletes member pods as the StatefulSet controller does when scaling down.
func deletePods(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = name, ns
		if err := env.Client.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting pod %s: %v", name, err)
		}
	}
}

// createClaim creates a bound-looking 1Gi claim; the apiserver's volume protection gives it its finalizer.
func createClaim(t *testing.T, ns, name string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if err := env.Client.Create(ctx, pvc); err != nil {
		t.Fatalf("creating claim %s: %v", name, err)
	}
}

func claim(g Gomega, ns, name string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc)).To(Succeed())
	return pvc
}

// releaseClaims does what the controller manager's volume protection does once no pod uses a deleted
// claim: it removes the finalizers, so the claims go.
func releaseClaims(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
			t.Fatalf("reading claim %s: %v", name, err)
		}
		pvc.Finalizers = nil
		if err := env.Client.Update(ctx, pvc); err != nil {
			t.Fatalf("releasing claim %s: %v", name, err)
		}
	}
}
