package statefulset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// renderInput is everything the pod template depends on besides the Etcd itself.
type renderInput struct {
	images config.Images
	// configChecksum is configmap.Checksum of the rendered ConfigMap data.
	configChecksum string
	// local is the Local store's checked volume and the sidecar's mount of it; nil for other providers.
	local *storeaccess.LocalMount
}

// podTemplate renders the pod template of a defaulted Etcd.
func podTemplate(etcd *druidv1alpha1.Etcd, in renderInput) corev1.PodTemplateSpec {
	labels := map[string]string{}
	maps.Copy(labels, etcd.Spec.Labels)
	maps.Copy(labels, druidv1alpha1.ManagedLabels(etcd))
	annotations := map[string]string{}
	maps.Copy(annotations, etcd.Spec.Annotations)
	annotations[druidv1alpha1.ConfigMapChecksumAnnotation] = in.configChecksum
	etcdImg, brImg := etcdImage(in.images, etcd), backupRestoreImage(in.images, etcd)
	caps := in.images.Compatibility.For(brImg, etcdImg)

	spec := corev1.PodSpec{
		HostAliases:                   []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{etcdpod.LocalHostName(etcd.Name)}}},
		ServiceAccountName:            druidv1alpha1.ServiceAccountName(etcd),
		DeprecatedServiceAccount:      druidv1alpha1.ServiceAccountName(etcd),
		Affinity:                      etcd.Spec.SchedulingConstraints.Affinity.DeepCopy(),
		SecurityContext:               securityContext(etcd),
		Containers:                    []corev1.Container{etcdContainer(etcd, etcdImg, caps), backupRestoreContainer(etcd, brImg, caps.BackupRestore, in.local)},
		Volumes:                       append(volumes(etcd, in.local), sidecarHomeVolumes(caps.BackupRestore)...),
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSClusterFirst,
		SchedulerName:                 corev1.DefaultSchedulerName,
		TerminationGracePeriodSeconds: ptr.To(int64(corev1.DefaultTerminationGracePeriodSeconds)),
	}
	if pc := etcd.Spec.PriorityClassName; pc != nil && *pc != "" {
		spec.PriorityClassName = *pc
	}
	for _, c := range etcd.Spec.SchedulingConstraints.TopologySpreadConstraints {
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, *c.DeepCopy())
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec:       spec,
	}
}

// securityContext runs the pod as the non-root uid 65532 (HOME /home/nonroot in the images) unless
// spec.runAsRoot asks otherwise; fsGroup makes the data volume writable for that uid. Every pod gets the
// runtime's default seccomp profile.
func securityContext(etcd *druidv1alpha1.Etcd) *corev1.PodSecurityContext {
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	if runsAsRoot(etcd) {
		return &corev1.PodSecurityContext{SeccompProfile: seccomp}
	}
	uid := druidv1alpha1.DefaultRunAsUser
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid), FSGroup: ptr.To(uid),
		SeccompProfile: seccomp}
}

// containerSecurityContext hardens both containers: no privilege escalation, no capabilities and a
// read-only root file system (they write only to their volumes and /tmp, an emptyDir). spec.runAsRoot
// keeps the images' own defaults, for images that expect to run as root.
func containerSecurityContext(etcd *druidv1alpha1.Etcd) *corev1.SecurityContext {
	if runsAsRoot(etcd) {
		return nil
	}
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func runsAsRoot(etcd *druidv1alpha1.Etcd) bool {
	return etcd.Spec.RunAsRoot != nil && *etcd.Spec.RunAsRoot
}

// templateChecksum identifies a rendered pod template. The StatefulSet keeps it in an annotation, so that
// Sync can tell "the spec asks for something else" from "the apiserver filled in defaults" without
// knowing every default the apiserver applies.
func templateChecksum(t corev1.PodTemplateSpec) (string, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
