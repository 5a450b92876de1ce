package statefulset

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

// An Etcd that leaves garbage collection unset keeps 7 full snapshots (LimitBased), as the upstream druid
// renders it; the sidecar's own default would be Exponential.
func TestUnsetGarbageCollectionIsLimitBasedKeepingSeven(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	})
	args := BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)
	g.Expect(args).To(ContainElements("--garbage-collection-policy=LimitBased", "--max-backups=7"))
}

// Both containers request 50m CPU and 128Mi memory when the Etcd leaves their resources unset, as the
// upstream druid renders them; resources that are set, even empty, are taken as they are.
func TestUnsetResourcesRequestTheUpstreamDefaults(t *testing.T) {
	g := NewWithT(t)
	in := renderInput{images: config.Images{EtcdWrapper: "e", BackupRestore: "b"}, configChecksum: "c"}
	want := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
	for _, c := range podTemplate(newEtcd(), in).Spec.Containers {
		g.Expect(c.Resources.Requests.Cpu().Cmp(want.Requests[corev1.ResourceCPU])).To(Equal(0), c.Name)
		g.Expect(c.Resources.Requests.Memory().Cmp(want.Requests[corev1.ResourceMemory])).To(Equal(0), c.Name)
		g.Expect(c.Resources.Limits).To(BeEmpty(), c.Name)
	}

	empty := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Resources = &corev1.ResourceRequirements{}
		e.Spec.Backup.Resources = &corev1.ResourceRequirements{}
	})
	for _, c := range podTemplate(empty, in).Spec.Containers {
		g.Expect(c.Resources).To(Equal(corev1.ResourceRequirements{}), c.Name)
	}
}

// An Etcd that sets garbage collection and both containers' resources renders the pod template it
// rendered before these defaults existed: changing the defaults must not roll its members. The checksum
// was taken from the rendering before the change, with the step flags our wrapper image gets since the
// same release (--step-etcd-3.5-binary, --step-etcd-3.6-binary: one roll on purpose) and the readiness
// probe that asks every second from the start (containers.go: one more roll on purpose); if it changes,
// every such member rolls.
func TestExplicitFieldsRenderAsBeforeTheUpstreamDefaults(t *testing.T) {
	g := NewWithT(t)
	e := fullEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential)
		e.Spec.Etcd.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}
		e.Spec.Backup.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	})
	images := config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"}
	sum, err := templateChecksum(podTemplate(e, renderInput{images: images, configChecksum: "c"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum).To(Equal(explicitFieldsChecksum))
}

const explicitFieldsChecksum = "b47057916ceca35d8a98df03b6ed7ae7fa14919787b624c10b4178a72169a05c"
