package etcdcontroller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

const (
	etcdName = "etcd-main"
	timeout  = 30 * time.Second
	poll     = 100 * time.Millisecond
)

var ctx = context.Background()

// createEtcd stores an Etcd named etcd-main.
func createEtcd(t *testing.T, namespace string, replicas int32, customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	t.Helper()
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: etcdName, Namespace: namespace},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main"},
			Replicas: replicas,
		},
	}
	for _, c := range customize {
		c(etcd)
	}
	NewWithT(t).Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	return etcd
}

func getEtcd(g Gomega, namespace string) *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: etcdName}, etcd)).To(Succeed())
	return etcd
}

// recordedClusterSize is the cluster size druid recorded on the Etcd's StatefulSet
// (druidv1alpha1.ClusterSizeAnnotation); nil without the StatefulSet or the annotation.
func recordedClusterSize(g Gomega, namespace string) *int32 {
	sts := &appsv1.StatefulSet{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: etcdName}, sts)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	size, ok := druidv1alpha1.AnnotatedClusterSize(sts.Annotations)
	if !ok {
		return nil
	}
	return &size
}

// lastFullSnapshot and lastDeltaSnapshot are the Etcd's last snapshots as druid reads them: from the
// snapshot leases (and the StatefulSet's record of the full snapshot before an update), health.LastSnapshots.
func lastFullSnapshot(g Gomega, namespace string) *druidv1alpha1.SnapshotStatus {
	full, _ := health.LastSnapshots(observedSnapshots(g, namespace))
	return full
}

func lastDeltaSnapshot(g Gomega, namespace string) *druidv1alpha1.SnapshotStatus {
	_, delta := health.LastSnapshots(observedSnapshots(g, namespace))
	return delta
}

func observedSnapshots(g Gomega, namespace string) health.Observed {
	etcd := getEtcd(g, namespace)
	o := health.Observed{Etcd: etcd}
	optional := func(name string, obj client.Object) bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return false
		}
		g.Expect(err).NotTo(HaveOccurred())
		return true
	}
	if sts := (&appsv1.StatefulSet{}); optional(druidv1alpha1.StatefulSetName(etcd), sts) {
		o.StatefulSet = sts
	}
	if l := (&coordinationv1.Lease{}); optional(druidv1alpha1.FullSnapshotLeaseName(etcd), l) {
		o.SnapshotLeases.Full = l
	}
	if l := (&coordinationv1.Lease{}); optional(druidv1alpha1.DeltaSnapshotLeaseName(etcd), l) {
		o.SnapshotLeases.Delta = l
	}
	return o
}

// updateEtcd changes the stored Etcd, retrying on conflicts with the controller's writes.
func updateEtcd(t *testing.T, namespace string, change func(*druidv1alpha1.Etcd)) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		etcd := getEtcd(g, namespace)
		change(etcd)
		g.Expect(env.Client.Update(ctx, etcd)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// expectCondition waits until the Etcd's condition has status and reason, and returns the Etcd.
func expectCondition(t *testing.T, namespace string, ct druidv1alpha1.ConditionType, status druidv1alpha1.ConditionStatus, reason string) *druidv1alpha1.Etcd {
	t.Helper()
	var etcd *druidv1alpha1.Etcd
	NewWithT(t).Eventually(func(g Gomega) {
		etcd = getEtcd(g, namespace)
		c := druidv1alpha1.FindCondition(etcd.Status.Conditions, ct)
		g.Expect(c).NotTo(BeNil(), "condition %s", ct)
		g.Expect(string(c.Status)+"/"+c.Reason).To(Equal(string(status)+"/"+reason), "condition %s: %s", ct, c.Message)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return etcd
}

// waitReconciled waits until the spec run of the current generation finished successfully. The run
// removes the operation annotation last, after the status write that carries observedGeneration: a status
// that already says Succeeded while the annotation is still there belongs to a run that has not finished
// yet (the window is one apiserver round trip, wide enough on a busy machine).
func waitReconciled(t *testing.T, namespace string) *druidv1alpha1.Etcd {
	t.Helper()
	var etcd *druidv1alpha1.Etcd
	NewWithT(t).Eventually(func(g Gomega) {
		etcd = getEtcd(g, namespace)
		g.Expect(etcd.Status.ObservedGeneration).To(Equal(ptr.To(etcd.Generation)))
		g.Expect(etcd.Status.LastOperation).NotTo(BeNil())
		g.Expect(etcd.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateSucceeded))
		g.Expect(etcdcontroller.HasReconcileAnnotation(etcd)).To(BeFalse(), "the run that succeeded has not removed the operation annotation yet")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return etcd
}

func exists(namespace, name string, obj client.Object) func() error {
	return func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj) }
}

func statefulSet(g Gomega, namespace string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: etcdName}, sts)).To(Succeed())
	return sts
}

// createPod creates the pod of an ordinal (memberPod) and sets its readiness, as the StatefulSet controller
// and the kubelet would.
func createPod(t *testing.T, namespace string, ordinal int, ready bool) {
	t.Helper()
	g := NewWithT(t)
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) { pod = memberPod(g, namespace, ordinal) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	setPodReady(t, namespace, pod.Name, ready)
}

// memberPod is the pod of an ordinal with the StatefulSet's labels and the StatefulSet as controller
// (druid counts only such pods as members).
func memberPod(g Gomega, namespace string, ordinal int) *corev1.Pod {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: etcdName, Namespace: namespace}}
	sts := statefulSet(g, namespace)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PodName(etcd, ordinal), Namespace: namespace, Labels: druidv1alpha1.ManagedLabels(etcd),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "example.org/etcd-wrapper:v1"}}},
	}
}

// recoverPod makes the ordinal's pod Ready, creating it when it is gone: druid may delete a failed
// member's pod at any moment (case 9), also between reading the pod and writing its status, so both steps
// are retried together until one of them lands.
func recoverPod(t *testing.T, namespace string, ordinal int) {
	t.Helper()
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: etcdName, Namespace: namespace}}
	g.Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: druidv1alpha1.PodName(etcd, ordinal)}, pod)
		if apierrors.IsNotFound(err) {
			pod = memberPod(g, namespace, ordinal)
			g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
		} else {
			g.Expect(err).NotTo(HaveOccurred())
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

func setPodReady(t *testing.T, namespace, name string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	NewWithT(t).Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod)).To(Succeed())
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// setStatefulSetRolledOut writes the status the StatefulSet controller reports once every replica is
// ready and on the current revision.
func setStatefulSetRolledOut(t *testing.T, namespace string, replicas int32) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		sts := statefulSet(g, namespace)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: replicas, ReadyReplicas: replicas,
			CurrentReplicas: replicas, UpdatedReplicas: replicas, AvailableReplicas: replicas, CurrentRevision: "r1", UpdateRevision: "r1"}
		g.Expect(env.Client.Status().Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// createSecret stores a secret with the given keys (each with some content).
func createSecret(t *testing.T, namespace, name string, keys ...string) {
	t.Helper()
	data := map[string][]byte{}
	for _, k := range keys {
		data[k] = []byte("data of " + k)
	}
	NewWithT(t).Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Data: data})).To(Succeed())
}

// warningEvents returns the Warning events on the Etcd with the given reason.
func warningEvents(g Gomega, namespace, reason string) []corev1.Event {
	list := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{
		"involvedObject.kind": "Etcd", "involvedObject.name": etcdName, "type": corev1.EventTypeWarning, "reason": reason,
	})).To(Succeed())
	return list.Items
}

func withClientTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd"}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"},
		ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client"},
	}
}

func withPeerTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd-peer"}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-peer-server"},
	}}
}

func withS3Store(e *druidv1alpha1.Etcd) {
	e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--a/etcd-main", Container: ptr.To("bucket"),
		Provider: ptr.To(druidv1alpha1.StorageProviderS3), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
}
