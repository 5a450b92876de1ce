package component_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// upstreamVariant is the shape of an upstream etcd-druid release's objects: the old one (before v0.22)
// selects and labels with `instance`/`name`, the new one with managed-by/part-of.
type upstreamVariant struct {
	old bool
	// podManagementPolicy of its StatefulSet (the oldest chart rendered none, i.e. OrderedReady).
	podManagementPolicy appsv1.PodManagementPolicyType
	// claim is the volumeClaimTemplates name when it is not the Etcd's.
	claim string
}

func (v upstreamVariant) claimName(etcd *druidv1alpha1.Etcd) string {
	if v.claim != "" {
		return v.claim
	}
	return druidv1alpha1.VolumeClaimTemplateName(etcd)
}

// selector is the variant's StatefulSet, Service and PDB selector.
func (v upstreamVariant) selector(etcd *druidv1alpha1.Etcd) map[string]string {
	if v.old {
		return map[string]string{"instance": etcd.Name, "name": "etcd"}
	}
	return map[string]string{"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": etcd.Name}
}

// labels are an object's labels as the variant renders them (component and name only in the new one).
func (v upstreamVariant) labels(etcd *druidv1alpha1.Etcd, componentName, name string) map[string]string {
	l := v.selector(etcd)
	if !v.old {
		l["app.kubernetes.io/component"], l["app.kubernetes.io/name"] = componentName, name
	}
	return l
}

func upstreamMeta(v upstreamVariant, etcd *druidv1alpha1.Etcd, componentName, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace, Labels: v.labels(etcd, componentName, name),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: etcd.Name,
			UID: etcd.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}
}

// upstreamPodTemplate is upstream druid's pod template, reduced to what matters here: its labels
// (spec.labels and the selector), its images and its data volume.
func upstreamPodTemplate(v upstreamVariant, etcd *druidv1alpha1.Etcd) corev1.PodTemplateSpec {
	labels := maps.Clone(etcd.Spec.Labels)
	maps.Copy(labels, v.labels(etcd, "etcd-statefulset", etcd.Name))
	mount := []corev1.VolumeMount{{Name: v.claimName(etcd), MountPath: "/var/etcd/data"}}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"checksum/etcd-configmap": "deployed"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "etcd", Image: "europe-docker.pkg.dev/gardener-project/releases/gardener/etcd-wrapper:v0.1.1", VolumeMounts: mount},
			{Name: "backup-restore", Image: "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.28.0", VolumeMounts: mount},
		}},
	}
}

// createUpstream stores the objects an upstream druid of variant v left for etcd (replicas members): the
// StatefulSet with its pods and PVCs (the StatefulSet controller's part, which envtest lacks), the
// Services, the PDB and the leases. It returns the pods' and PVCs' UIDs by name.
func createUpstream(t *testing.T, v upstreamVariant, etcd *druidv1alpha1.Etcd) map[string]string {
	t.Helper()
	g, ctx := NewWithT(t), context.Background()
	template := upstreamPodTemplate(v, etcd)
	stsMeta := upstreamMeta(v, etcd, "etcd-statefulset", etcd.Name)
	if v.old {
		stsMeta.Annotations = map[string]string{"gardener.cloud/owned-by": etcd.Namespace + "/" + etcd.Name, "gardener.cloud/owner-type": "etcd"}
	}
	sts := &appsv1.StatefulSet{ObjectMeta: stsMeta, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To(etcd.Spec.Replicas), Selector: &metav1.LabelSelector{MatchLabels: v.selector(etcd)},
		ServiceName: druidv1alpha1.PeerServiceName(etcd), PodManagementPolicy: v.podManagementPolicy, Template: template,
		UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: v.claimName(etcd)},
			Spec: upstreamClaimSpec(etcd)}},
	}}
	g.Expect(env.Client.Create(ctx, sts)).To(Succeed())

	uids := map[string]string{}
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s", v.claimName(etcd), druidv1alpha1.PodName(etcd, i)),
			Namespace: etcd.Namespace, Labels: v.selector(etcd)}, Spec: sts.Spec.VolumeClaimTemplates[0].Spec}
		g.Expect(env.Client.Create(ctx, pvc)).To(Succeed())
		uids[pvc.Name] = string(pvc.UID)

		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PodName(etcd, i), Namespace: etcd.Namespace, Labels: maps.Clone(template.Labels),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}, Spec: *template.Spec.DeepCopy()}
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: v.claimName(etcd),
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}})
		pod.Labels["controller-revision-hash"] = sts.Name + "-deployed"
		pod.Labels["statefulset.kubernetes.io/pod-name"] = pod.Name
		g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
		uids[pod.Name] = string(pod.UID)

		lease := &coordinationv1.Lease{ObjectMeta: upstreamMeta(v, etcd, "etcd-member-lease", druidv1alpha1.MemberLeaseName(etcd, i))}
		lease.Annotations = map[string]string{druidv1alpha1.TLSEnabledAnnotation: "false"}
		g.Expect(env.Client.Create(ctx, lease)).To(Succeed())
	}
	for _, name := range []string{druidv1alpha1.FullSnapshotLeaseName(etcd), druidv1alpha1.DeltaSnapshotLeaseName(etcd)} {
		g.Expect(env.Client.Create(ctx, &coordinationv1.Lease{ObjectMeta: upstreamMeta(v, etcd, "etcd-snapshot-lease", name)})).To(Succeed())
	}
	setRolledOut(t, etcd, "deployed")

	port := func(name string, p int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: p, TargetPort: intstr.FromInt32(p)}
	}
	clientSvc := &corev1.Service{ObjectMeta: upstreamMeta(v, etcd, "etcd-client-service", druidv1alpha1.ClientServiceName(etcd)), Spec: corev1.ServiceSpec{
		Selector: v.selector(etcd), Ports: []corev1.ServicePort{port("client", 2379), port("server", 2380), port("backuprestore", 8080)}}}
	peer := &corev1.Service{ObjectMeta: upstreamMeta(v, etcd, "etcd-peer-service", druidv1alpha1.PeerServiceName(etcd)), Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: v.selector(etcd), Ports: []corev1.ServicePort{port("peer", 2380)}}}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: upstreamMeta(v, etcd, "etcd-pdb", druidv1alpha1.PDBName(etcd)), Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: v.selector(etcd)}}}
	for _, obj := range []client.Object{clientSvc, peer, pdb} {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	}
	return uids
}

// setRolledOut writes the status the StatefulSet controller reports once every replica runs revision and
// is ready.
func setRolledOut(t *testing.T, etcd *druidv1alpha1.Etcd, revision string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts)).To(Succeed())
		n := ptr.Deref(sts.Spec.Replicas, 1)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n, CurrentReplicas: n,
			UpdatedReplicas: n, AvailableReplicas: n, CurrentRevision: sts.Name + "-" + revision, UpdateRevision: sts.Name + "-" + revision}
		g.Expect(env.Client.Status().Update(context.Background(), sts)).To(Succeed())
	}).Should(Succeed())
}

// rollPods does what the StatefulSet controller does in a rolling update, as far as labels go: every pod
// gets the template's labels and the new revision. (The pods keep their UIDs here: the assertions on UIDs
// check that druid itself never deleted a pod.)
func rollPods(t *testing.T, etcd *druidv1alpha1.Etcd, template corev1.PodTemplateSpec, revision string) {
	t.Helper()
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		NewWithT(t).Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.PodName(etcd, i)}, pod)).To(Succeed())
			pod.Labels = maps.Clone(template.Labels)
			pod.Labels["controller-revision-hash"] = druidv1alpha1.StatefulSetName(etcd) + "-" + revision
			pod.Labels["statefulset.kubernetes.io/pod-name"] = pod.Name
			g.Expect(env.Client.Update(context.Background(), pod)).To(Succeed())
		}).Should(Succeed())
	}
	setRolledOut(t, etcd, revision)
}

// collectGarbage does what the garbage collector does for a StatefulSet deleted with propagationPolicy
// Orphan: it removes the owner reference from the pods and then the `orphan` finalizer.
func collectGarbage(t *testing.T, etcd *druidv1alpha1.Etcd) {
	t.Helper()
	g, ctx := NewWithT(t), context.Background()
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.PodName(etcd, i)}, pod)).To(Succeed())
		pod.OwnerReferences = nil
		g.Expect(env.Client.Update(ctx, pod)).To(Succeed())
	}
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts)).To(Succeed())
	g.Expect(sts.DeletionTimestamp).NotTo(BeNil())
	g.Expect(sts.Finalizers).To(ConsistOf(metav1.FinalizerOrphanDependents))
	sts.Finalizers = nil
	g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
}

// upstreamClaimSpec is the claim template's spec as upstream druid renders it: ReadWriteOnce,
// spec.storageCapacity (default 16Gi), spec.storageClass.
func upstreamClaimSpec(etcd *druidv1alpha1.Etcd) corev1.PersistentVolumeClaimSpec {
	capacity := resourceMust("16Gi")
	if etcd.Spec.StorageCapacity != nil {
		capacity = *etcd.Spec.StorageCapacity
	}
	return corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: etcd.Spec.StorageClass,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: capacity}}}
}
