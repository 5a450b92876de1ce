//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// createUpstreamObjects creates, for obj, the objects upstream etcd-druid renders (names, labels, the
// StatefulSet's selector, service name, pod management and PVC template, empty member leases, the snapshot
// leases, both Services, the ConfigMap, the PDB, the ServiceAccount), each owned by the Etcd as upstream
// druid owns them. Its members run etcd 3.5 as Gardener's etcd-wrapper v0.8 images do — here the pinned
// etcd 3.5 server of our wrapper image, started directly with the flags the configuration template
// resolves to, on the PVCs and the TLS secrets of the Etcd, since Gardener's images cannot be pulled here.
// The pods have no backup-restore container: they stand for the data and the shapes, not for the
// upstream sidecar.
func createUpstreamObjects(ctx context.Context, env *seedworkflow.Env, obj *druidv1alpha1.Etcd, wrapperImage string) {
	create := func(o client.Object, component string) {
		o.SetNamespace(obj.Namespace)
		o.SetLabels(druidv1alpha1.ComponentLabels(obj, component, o.GetName()))
		Expect(controllerutil.SetControllerReference(obj, o, env.Client.Scheme())).To(Succeed())
		Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %T %s", o, o.GetName())
	}
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ServiceAccountName(obj)}}, druidv1alpha1.ComponentServiceAccount)
	for i := 0; i < int(obj.Spec.Replicas); i++ {
		create(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.MemberLeaseName(obj, i)}}, druidv1alpha1.ComponentMemberLease)
	}
	for _, name := range []string{druidv1alpha1.FullSnapshotLeaseName(obj), druidv1alpha1.DeltaSnapshotLeaseName(obj)} {
		create(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, druidv1alpha1.ComponentSnapshotLease)
	}
	selector := druidv1alpha1.ManagedLabels(obj)
	create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ClientServiceName(obj)}, Spec: corev1.ServiceSpec{
		Selector: selector, Ports: []corev1.ServicePort{
			{Name: "client", Port: 2379, TargetPort: intstr.FromInt32(2379)},
			{Name: "server", Port: 2380, TargetPort: intstr.FromInt32(2380)},
			{Name: "backuprestore", Port: 8080, TargetPort: intstr.FromInt32(8080)},
		}}}, druidv1alpha1.ComponentClientService)
	create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PeerServiceName(obj)}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: selector,
		Ports: []corev1.ServicePort{{Name: "peer", Port: 2380, TargetPort: intstr.FromInt32(2380)}}}}, druidv1alpha1.ComponentPeerService)
	defaulted := obj.DeepCopy() // as druid renders it: unset fields at their defaults
	druidv1alpha1.SetDefaults(defaulted)
	data, err := configmap.Render(defaulted)
	Expect(err).NotTo(HaveOccurred())
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ConfigMapName(obj)}, Data: data}, druidv1alpha1.ComponentConfigMap)
	create(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PDBName(obj)}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(obj.Spec.Replicas/2 + 1)), Selector: &metav1.LabelSelector{MatchLabels: selector}}},
		druidv1alpha1.ComponentPDB)
	create(upstreamStatefulSet(defaulted, wrapperImage), druidv1alpha1.ComponentStatefulSet)
}

// upstreamStatefulSet is upstream druid's StatefulSet shape with etcd 3.5 members (see
// createUpstreamObjects).
func upstreamStatefulSet(obj *druidv1alpha1.Etcd, wrapperImage string) *appsv1.StatefulSet {
	uid := druidv1alpha1.DefaultRunAsUser
	tls, peer := obj.Spec.Etcd.ClientUrlTLS, obj.Spec.Etcd.PeerUrlTLS
	Expect(tls).NotTo(BeNil(), "Gardener's Etcds serve clients over TLS")
	Expect(peer).NotTo(BeNil(), "Gardener's HA Etcds talk to peers over TLS")
	host := fmt.Sprintf("$(POD_NAME).%s.%s.svc", druidv1alpha1.PeerServiceName(obj), obj.Namespace)
	var initial []string
	for i := 0; i < int(obj.Spec.Replicas); i++ {
		initial = append(initial, fmt.Sprintf("%s=https://%s.%s.%s.svc:2380", druidv1alpha1.PodName(obj, i), druidv1alpha1.PodName(obj, i), druidv1alpha1.PeerServiceName(obj), obj.Namespace))
	}
	args := []string{
		"--name=$(POD_NAME)", "--data-dir=" + etcdpod.DataDir,
		"--listen-client-urls=https://0.0.0.0:2379", "--advertise-client-urls=https://" + host + ":2379",
		"--listen-peer-urls=https://0.0.0.0:2380", "--initial-advertise-peer-urls=https://" + host + ":2380",
		"--initial-cluster=" + strings.Join(initial, ","), "--initial-cluster-token=etcd-cluster", "--initial-cluster-state=new",
		"--cert-file=" + etcdpod.ClientServerTLSMountPath + "/tls.crt", "--key-file=" + etcdpod.ClientServerTLSMountPath + "/tls.key",
		"--client-cert-auth", "--trusted-ca-file=" + etcdpod.ClientCAMountPath + "/" + configmap.CAFileName(tls.TLSCASecretRef),
		"--peer-cert-file=" + etcdpod.PeerServerTLSMountPath + "/tls.crt", "--peer-key-file=" + etcdpod.PeerServerTLSMountPath + "/tls.key",
		"--peer-client-cert-auth", "--peer-trusted-ca-file=" + etcdpod.PeerCAMountPath + "/" + configmap.CAFileName(peer.TLSCASecretRef),
		"--quota-backend-bytes=" + fmt.Sprint(obj.Spec.Etcd.Quota.Value()), "--snapshot-count=75000",
	}
	secretVolume := func(name, secret, path string) (corev1.Volume, corev1.VolumeMount) {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}},
			corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true}
	}
	mounts := []corev1.VolumeMount{{Name: druidv1alpha1.VolumeClaimTemplateName(obj), MountPath: etcdpod.DataVolumeMountPath}}
	var volumes []corev1.Volume
	for _, v := range []struct{ name, secret, path string }{
		{"etcd-ca", tls.TLSCASecretRef.Name, etcdpod.ClientCAMountPath},
		{"etcd-server-tls", tls.ServerTLSSecretRef.Name, etcdpod.ClientServerTLSMountPath},
		{"etcd-peer-ca", peer.TLSCASecretRef.Name, etcdpod.PeerCAMountPath},
		{"etcd-peer-server-tls", peer.ServerTLSSecretRef.Name, etcdpod.PeerServerTLSMountPath},
	} {
		vol, mount := secretVolume(v.name, v.secret, v.path)
		volumes, mounts = append(volumes, vol), append(mounts, mount)
	}
	// The pods carry spec.labels (Gardener's network labels among them) beside druid's own, as upstream's.
	labels := maps.Clone(obj.Spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, druidv1alpha1.ComponentLabels(obj, druidv1alpha1.ComponentStatefulSet, druidv1alpha1.StatefulSetName(obj)))
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.StatefulSetName(obj)},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(obj.Spec.Replicas), Selector: &metav1.LabelSelector{MatchLabels: druidv1alpha1.ManagedLabels(obj)},
			ServiceName: druidv1alpha1.PeerServiceName(obj), PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: druidv1alpha1.ServiceAccountName(obj),
					PriorityClassName:  ptr.Deref(obj.Spec.PriorityClassName, ""),
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid),
						FSGroup: ptr.To(uid), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: "etcd", Image: wrapperImage, Command: []string{etcdpod.StepEtcd35BinaryPath}, Args: args,
						Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
						Ports: []corev1.ContainerPort{{Name: "client", ContainerPort: 2379}, {Name: "server", ContainerPort: 2380}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(2379)}},
							PeriodSeconds: 2},
						VolumeMounts: mounts,
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
					Volumes: volumes,
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.VolumeClaimTemplateName(obj)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: obj.Spec.StorageClass,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: ptr.Deref(obj.Spec.StorageCapacity, resource.MustParse("1Gi"))}},
				},
			}},
		},
	}
}
